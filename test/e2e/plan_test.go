package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// planUnit counts its starts in planStarts, so a restart the plan predicts can be seen.
const (
	planUnit   = "mco-plan-count.service"
	planStarts = "/var/lib/mco-plan-starts"
	planFile   = "/etc/mco-plan-note"
)

func planFileMC(content string) string {
	return `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 50-worker-plan-file
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.4.0
    storage:
      files:
      - path: ` + planFile + `
        mode: 420
        contents:
          source: data:,` + content + `
`
}

const planUnitMC = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 60-worker-plan-unit
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.4.0
    systemd:
      units:
      - name: ` + planUnit + `
        enabled: true
        contents: |
          [Unit]
          Description=counts its starts for mco plan's e2e test
          [Service]
          Type=oneshot
          RemainAfterExit=yes
          ExecStart=/bin/sh -c 'echo start >> ` + planStarts + `'
          [Install]
          WantedBy=multi-user.target
`

// planPolicy restarts the counting unit for changes of planFile instead of rebooting.
const planPolicy = `apiVersion: operator.openshift.io/v1
kind: MachineConfiguration
metadata:
  name: cluster
spec:
  managementState: Managed
  nodeDisruptionPolicy:
    files:
    - path: ` + planFile + `
      actions:
      - type: Restart
        restart:
          serviceName: ` + planUnit + `
    sshkey:
      actions:
      - type: None
`

// planAgainstAgent checks `mco plan`'s predictions against what the agent then does on real machines:
// for each change, the built bin/mco plans it against the cluster, kubectl applies it, and
// once the pool is Updated the agent's events on the Node, the machine's boot count and its
// files must agree with the plan: the rendered config, drain or not, reboot or not, and for a
// change without a reboot the exact actions.
func planAgainstAgent(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(ctx, 12*time.Minute)
	defer cancel()
	mco := testenv.RequireMCO(t)
	kubectl := testenv.RequireTool(t, "kubectl")
	t.Cleanup(func() {
		if t.Failed() {
			cl.LogState(t, workers)
		}
	})
	kubeconfig := filepath.Join(cl.Dir, "kubeconfig")
	dir := t.TempDir()
	example := func(name string) string { return filepath.Join(testenv.RepoRoot(), "examples", name) }
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	target := cl.Pool(t, ctx).Spec.Configuration.Name
	starts := map[string]int{}

	steps := []struct {
		name       string
		file       string
		disruption string
		before     func(t *testing.T)
		check      func(t *testing.T, node string)
	}{
		{name: "a file", file: write("file.yaml", planFileMC("first%0A")), disruption: "drain+reboot",
			check: func(t *testing.T, n string) { wantFile(t, ctx, cl, n, planFile, "first\n") }},
		{name: "a systemd unit", file: write("unit.yaml", planUnitMC), disruption: "drain+reboot",
			check: func(t *testing.T, n string) {
				if got := cl.InMachine(t, ctx, n, "systemctl", "is-active", planUnit); got != "active" {
					t.Errorf("%s: %s is %s", n, planUnit, got)
				}
			}},
		{name: "a kernel argument", file: example("80-worker-kargs.yaml"), disruption: "drain+reboot",
			check: func(t *testing.T, n string) {
				if cmdline := cl.InMachine(t, ctx, n, "cat", "/proc/cmdline"); !strings.Contains(" "+cmdline+" ", " audit=1 ") {
					t.Errorf("%s: /proc/cmdline = %q, want audit=1", n, cmdline)
				}
			}},
		{name: "an SSH key", file: example("70-worker-ssh.yaml"), disruption: "none",
			check: func(t *testing.T, n string) {
				if got := cl.NodeFile(ctx, n, "/home/core/.ssh/authorized_keys.d/ignition"); !strings.Contains(got, "admin@example.com") {
					t.Errorf("%s: core's keys are %q", n, got)
				}
			}},
		{name: "a file a NodeDisruptionPolicy restarts a unit for", file: write("file2.yaml", planFileMC("second%0A")),
			disruption: "restart " + planUnit,
			before: func(t *testing.T) {
				if _, err := clustertest.Run(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "-f", write("policy.yaml", planPolicy)); err != nil {
					t.Fatalf("kubectl apply the policy: %v", err)
				}
				for _, n := range workers {
					starts[n] = strings.Count(cl.NodeFile(ctx, n, planStarts), "start")
				}
			},
			check: func(t *testing.T, n string) {
				wantFile(t, ctx, cl, n, planFile, "second\n")
				if got := strings.Count(cl.NodeFile(ctx, n, planStarts), "start"); got != starts[n]+1 {
					t.Errorf("%s: %s started %d times since the policy, want once (the restart)", n, planUnit, got-starts[n])
				}
			}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			began := time.Now()
			if step.before != nil {
				step.before(t)
			}
			out, err := clustertest.Run(ctx, mco, "plan", "-f", step.file, "--kubeconfig", kubeconfig, "-o", "json")
			var exit *exec.ExitError
			code := 0
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			var r changeplan.Report
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("mco plan exit %d, not a JSON report: %v\n%s", code, err, out)
			}
			if len(r.Pools) != 1 || r.Pools[0].Pool != "worker" || len(r.Pools[0].Groups) != 1 || r.Pools[0].Groups[0].Plan == nil {
				t.Fatalf("report %s: want the worker pool with one group of nodes", out)
			}
			pool, group := r.Pools[0], r.Pools[0].Groups[0]
			plan := group.Plan
			if group.Current != target || len(group.Nodes) != len(workers) {
				t.Fatalf("group on %s with %v; want every worker on %s", group.Current, group.Nodes, target)
			}
			if plan.Disruption != step.disruption {
				t.Fatalf("plan says %q, want %q: %s", plan.Disruption, step.disruption, out)
			}
			if want := map[bool]int{true: 1, false: 0}[plan.Disrupts()]; code != want {
				t.Fatalf("mco plan exit %d for %q, want %d", code, plan.Disruption, want)
			}
			boots := map[string]int{}
			for _, n := range workers {
				boots[n] = cl.Boots(t, n)
			}

			if _, err := clustertest.Run(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "-f", step.file); err != nil {
				t.Fatalf("kubectl apply: %v", err)
			}
			target = cl.WaitUpdated(t, ctx, target, int32(len(workers)))
			if pool.Rendered != target {
				t.Fatalf("the plan rendered %s, the controller %s", pool.Rendered, target)
			}
			for _, n := range workers {
				checkAgainstAgent(t, ctx, cl, n, target, plan, cl.Boots(t, n)-boots[n])
				step.check(t, n)
			}
			t.Logf("%s: planned %q, agent agreed, in %s", step.name, plan.Disruption, time.Since(began).Round(time.Second))
		})
		if t.Failed() {
			return // later steps plan from a state this one did not reach
		}
	}
}

// checkAgainstAgent compares the plan with the agent's events on the Node for its move to
// target and with how often the machine booted meanwhile.
func checkAgainstAgent(t *testing.T, ctx context.Context, cl *clustertest.Cluster, node, target string, plan *changeplan.Plan, booted int) {
	t.Helper()
	var drained, rebooted bool
	var applied string
	// The agent's recorder sends asynchronously: the event of an update without a reboot may
	// arrive just after the pool reports Updated.
	clustertest.Eventually(t, 30*time.Second, "the agent's event for "+target+" on "+node, func() bool {
		var events corev1.EventList
		if err := cl.C.List(ctx, &events); err != nil {
			return false
		}
		drained, rebooted, applied = false, false, ""
		for _, e := range events.Items {
			if e.InvolvedObject.Kind != "Node" || e.InvolvedObject.Name != node || !strings.Contains(e.Message, target) {
				continue
			}
			switch e.Reason {
			case "Drain":
				drained = true
			case "Reboot":
				rebooted = true
			case "Updated":
				applied = e.Message
			}
		}
		return rebooted || applied != ""
	})
	if drained != plan.Drain {
		t.Errorf("%s: plan drain=%v, the agent drained: %v", node, plan.Drain, drained)
	}
	if rebooted != plan.Reboot || (booted == 1) != plan.Reboot || booted > 1 {
		t.Errorf("%s: plan reboot=%v; the agent's Reboot event: %v, boots: %d", node, plan.Reboot, rebooted, booted)
	}
	if !plan.Reboot {
		// "Applied <config> without a reboot (<actions>)": the very actions the plan lists.
		if want := "(" + strings.Join(plan.Actions, ", ") + ")"; !strings.HasSuffix(applied, want) {
			t.Errorf("%s: the agent says %q; the plan's actions are %s", node, applied, want)
		}
	}
}

func wantFile(t *testing.T, ctx context.Context, cl *clustertest.Cluster, node, path, want string) {
	t.Helper()
	if got := cl.NodeFile(ctx, node, path); got != want {
		t.Errorf("%s: %s = %q, want %q", node, path, got, want)
	}
}
