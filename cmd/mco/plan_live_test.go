//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/testenv"
)

// clusterImage is the render controller's default OS image in this test: a plan that did not
// recover it from the pools' rendered configs would name another rendered config.
const clusterImage = "registry.example.org/os@sha256:0123"

// planCluster loads testdata/manifests into a real API server as the controller would leave it:
// the MachineConfigs, pools worker and infra targeting their renders, worker-0 and worker-1 on
// worker's target (worker-1 with a reboot queued), worker-2 still on a render without
// 99-core-ssh (mid-update), infra-0 on infra's target.
func planCluster(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	set, err := manifest.Load(manifest.Options{FCOSRole: "worker"}, manifests)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	infra := set.Pool("infra")
	for _, p := range []*mcfgv1.MachineConfigPool{worker, infra} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, mc := range set.MachineConfigs {
		if err := c.Create(ctx, mc.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	opts := render.Options{Defaults: render.Defaults{OSImageURL: clusterImage}, ControllerVersion: "test-commit"}
	renderInto := func(p *mcfgv1.MachineConfigPool, mcs []*mcfgv1.MachineConfig, target bool) string {
		res, err := render.Render(p, mcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, res.Config); err != nil {
			t.Fatal(err)
		}
		if target {
			p.Spec.Configuration = mcfgv1.MachineConfigPoolStatusConfiguration{
				ObjectReference: corev1.ObjectReference{Name: res.Config.Name}, Source: res.Sources}
			if err := c.Update(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		return res.Config.Name
	}
	workerTarget := renderInto(worker, set.MachineConfigs, true)
	infraTarget := renderInto(infra, set.MachineConfigs, true)
	withoutSSH := slices.DeleteFunc(slices.Clone(set.MachineConfigs), func(mc *mcfgv1.MachineConfig) bool { return mc.Name == "99-core-ssh" })
	older := renderInto(worker, withoutSSH, false)

	workerLabels := map[string]string{protocol.WorkerRoleLabel: ""}
	for _, n := range []struct {
		name, current, desired string
		labels                 map[string]string
		extra                  map[string]string
	}{
		{"worker-0", workerTarget, workerTarget, workerLabels, nil},
		{"worker-1", workerTarget, workerTarget, workerLabels, map[string]string{protocol.PostConfigActionAnnotation: protocol.PostConfigActionRebooting}},
		{"worker-2", older, workerTarget, workerLabels, map[string]string{protocol.StateAnnotation: string(protocol.NodeWorking)}},
		{"infra-0", infraTarget, infraTarget, map[string]string{protocol.WorkerRoleLabel: "", "node-role.kubernetes.io/infra": ""}, nil},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels, Annotations: map[string]string{
			protocol.CurrentConfigAnnotation: n.current, protocol.DesiredConfigAnnotation: n.desired, protocol.StateAnnotation: string(protocol.NodeDone)}}}
		for k, v := range n.extra {
			node.Annotations[k] = v
		}
		if err := c.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
}

// change is what the test applies: 99-worker-kargs replaced (one more kernel argument) and
// 99-worker-ssh added (a second key), as YAML kubectl can apply.
func change(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kargs := `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 99-worker-kargs
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  kernelArguments: [audit=1]
`
	ssh, err := os.ReadFile("testdata/plan/ssh/99-worker-ssh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"99-worker-kargs.yaml": []byte(kargs), "99-worker-ssh.yaml": ssh} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPlanLive plans against one control plane of its own (the package's shared one has other
// tests' pools and nodes, which would join worker): first the chrony change under the cluster's
// NodeDisruptionPolicy, then, with the policy gone, the kernel-argument change that it applies
// for real at the end. Starting a control plane costs 20-30 s, so both share it.
func TestPlanLive(t *testing.T) {
	testenv.Integration(t)
	env := testenv.New(t)
	ctx := context.Background()
	planCluster(t, ctx, env.Client)
	t.Run("policy", func(t *testing.T) { planLivePolicy(t, ctx, env) })
	t.Run("apply", func(t *testing.T) { planLiveApply(t, ctx, env) })
}

// planLiveApply plans replacing 99-worker-kargs and adding 99-worker-ssh, then applies them with
// kubectl and checks the plan named the rendered configs the controller would render.
func planLiveApply(t *testing.T, ctx context.Context, env *testenv.Env) {
	var before mcfgv1.MachineConfig
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "99-worker-kargs"}, &before); err != nil {
		t.Fatal(err)
	}
	if len(before.Spec.KernelArguments) == 0 || slices.Contains(before.Spec.KernelArguments, "audit=1") {
		t.Fatalf("testdata's 99-worker-kargs is %v; the test replaces it with audit=1", before.Spec.KernelArguments)
	}
	dir := change(t)

	stdout, stderr, code := runMCO(t, "plan", "-f", dir, "--kubeconfig", env.KubeconfigPath, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (kernel arguments reboot); stderr:\n%s", code, stderr)
	}
	var r changeplan.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not a JSON report: %v\n%s", err, stdout)
	}
	if len(r.Pools) != 2 || r.Pools[0].Pool != "infra" || r.Pools[1].Pool != "worker" {
		t.Fatalf("pools %+v, want infra and worker (both select worker MachineConfigs)", r.Pools)
	}
	worker := r.Pools[1]
	if len(worker.Groups) != 2 {
		t.Fatalf("worker groups %+v, want the nodes on the target and the one behind", worker.Groups)
	}
	for _, g := range worker.Groups {
		p := g.Plan
		if p == nil || p.Disruption != "drain+reboot" || p.KernelArguments == nil || !slices.Contains(p.KernelArguments.Added, "audit=1") {
			t.Fatalf("group %s: plan %+v, want drain+reboot adding audit=1", g.Current, p)
		}
		if !p.SSHKeysChanged {
			t.Errorf("group %s: the added 99-worker-ssh's key is not in the plan", g.Current)
		}
		flagged := map[string]bool{}
		for _, n := range g.Nodes {
			flagged[n.Name] = n.RebootPending || n.Moving
		}
		if g.Current == worker.Target && (len(g.Nodes) != 2 || !flagged["worker-1"] || flagged["worker-0"]) {
			t.Errorf("target group %+v: want worker-0 and worker-1, worker-1 flagged", g.Nodes)
		}
		if g.Current != worker.Target && (len(g.Nodes) != 1 || !flagged["worker-2"]) {
			t.Errorf("older group %+v: want worker-2, flagged mid-update", g.Nodes)
		}
	}
	if !strings.Contains(stderr, "worker-1 has a reboot pending") || !strings.Contains(stderr, "infra-0 would be drained and rebooted") {
		t.Errorf("stderr does not say why:\n%s", stderr)
	}

	// The plan's new rendered configs are what the controller renders after a real
	// `kubectl apply` of the same files: overlay, rendered-config filter and defaults agree.
	if _, err := env.Kubectl(ctx, "apply", "-f", dir); err != nil {
		t.Fatal(err)
	}
	var mcs mcfgv1.MachineConfigList
	if err := env.Client.List(ctx, &mcs); err != nil {
		t.Fatal(err)
	}
	all := make([]*mcfgv1.MachineConfig, len(mcs.Items))
	for i := range mcs.Items {
		all[i] = &mcs.Items[i]
	}
	for _, pr := range r.Pools {
		var pool mcfgv1.MachineConfigPool
		if err := env.Client.Get(ctx, client.ObjectKey{Name: pr.Pool}, &pool); err != nil {
			t.Fatal(err)
		}
		res, err := render.Render(&pool, all, render.Options{Defaults: render.Defaults{OSImageURL: clusterImage}})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Rendered != res.Config.Name {
			var srcs []string
			for _, s := range res.Sources {
				srcs = append(srcs, s.Name)
			}
			js, _ := json.Marshal(res.Config.Spec)
			t.Logf("the applied cluster renders from %v: %s; the plan from %v", srcs, js, pr.Sources)
			t.Errorf("pool %s: plan renders %s, the applied cluster renders %s", pr.Pool, pr.Rendered, res.Config.Name)
		}
	}
}

// planLivePolicy plans the chrony change on infra without and with MachineConfiguration cluster,
// and deletes the policy again.
func planLivePolicy(t *testing.T, ctx context.Context, env *testenv.Env) {
	args := []string{"plan", "-f", "testdata/plan/chrony", "--kubeconfig", env.KubeconfigPath, "-o", "json", "--pool", "infra"}

	stdout, stderr, code := runMCO(t, args...)
	if code != 1 || !strings.Contains(stdout, `"disruption": "drain+reboot"`) {
		t.Fatalf("without a policy: exit %d, want 1 with drain+reboot\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile("testdata/plan/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var policy operatorv1.MachineConfiguration
	if err := yaml.UnmarshalStrict(data, &policy); err != nil {
		t.Fatal(err)
	}
	// The API server requires the sshkey policy that the agent defaults (None).
	policy.Spec.NodeDisruptionPolicy.SSHKey.Actions = []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}}
	if err := env.Client.Create(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Client.Delete(ctx, &policy); err != nil {
			t.Errorf("deleting the policy for the next part: %v", err)
		}
	}()
	stdout, stderr, code = runMCO(t, args...)
	var r changeplan.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("exit %d, stdout is not a JSON report: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if code != 0 || len(r.Pools) != 1 || len(r.Pools[0].Groups) != 1 || r.Pools[0].Groups[0].Plan.Disruption != "restart chronyd.service" {
		t.Errorf("with the cluster's policy: exit %d, want 0 restarting chronyd.service on infra-0\n%s\n%s", code, stdout, stderr)
	}

	stdout, _, code = runMCO(t, "plan", "-f", "testdata/plan/chrony", "--kubeconfig", env.KubeconfigPath)
	if code != 1 {
		t.Errorf("text, every pool: exit %d, want 1 (worker-1 has a reboot queued)", code)
	}
	for _, s := range []string{"POOL", "NODES ON", "worker-1*", "restart chronyd.service", "=== pool worker", "worker-1: reboot pending", "+server ntp.example.org iburst", "force file"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("text output lacks %q:\n%s", s, stdout)
		}
	}
}
