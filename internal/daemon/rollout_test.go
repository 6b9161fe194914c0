package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestRollout: three agents on three temp roots, with the controllers, roll out a rebootless
// file change, a change that needs a (simulated) reboot, and stop at a node that went Degraded
// through drift until the file is restored.
func TestRollout(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: protocol.WorkerPool},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: "worker"}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}},
		},
	}
	create(t, ctx, pool)
	create(t, ctx, machineConfig("00-worker", map[string]string{"/etc/base.conf": "base"}))
	r0 := awaitTarget(t, ctx, "")
	initial := &mcfgv1.MachineConfig{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: r0}, initial); err != nil {
		t.Fatal(err)
	}
	var agents []*agent
	for i := range 3 {
		name := fmt.Sprintf("worker-%d", i)
		root := newRoot(t)
		provision(t, root, initial)
		createNode(t, ctx, name)
		agents = append(agents, startAgent(t, name, root))
	}
	awaitAllDone(t, ctx, agents, r0)

	// 1. A file whose default policy is "reload crio": no drain, no reboot.
	create(t, ctx, machineConfig("50-worker-policy", map[string]string{"/etc/containers/policy.json": "{}"}))
	r1 := awaitTarget(t, ctx, r0)
	awaitAllDone(t, ctx, agents, r1)
	for _, ag := range agents {
		if ag.reboots.Load() != 0 {
			t.Errorf("%s rebooted for a rebootless change", ag.name)
		}
		if !slices.Contains(ag.sd.Ops(), "reload crio.service") {
			t.Errorf("%s: crio not reloaded; systemd saw %v", ag.name, ag.sd.Ops())
		}
		if dd := node(t, ctx, ag.name).Annotations[protocol.DesiredDrainAnnotation]; strings.HasPrefix(dd, "drain-"+r1) {
			t.Errorf("%s was drained for a rebootless change", ag.name)
		}
		mustContain(t, ag.root, "/etc/containers/policy.json", "{}")
	}

	// 2. A file no policy covers: drain, reboot, uncordon.
	create(t, ctx, machineConfig("60-worker-reboot", map[string]string{"/etc/needs-reboot.conf": "x"}))
	r2 := awaitTarget(t, ctx, r1)
	awaitAllDone(t, ctx, agents, r2)
	for _, ag := range agents {
		if got := ag.reboots.Load(); got != 1 {
			t.Errorf("%s rebooted %d times, want 1", ag.name, got)
		}
		n := node(t, ctx, ag.name)
		if n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.UncordonRequest(r2) || n.Spec.Unschedulable {
			t.Errorf("%s not uncordoned after its update: %s unschedulable=%v", ag.name, nodeSummary(n), n.Spec.Unschedulable)
		}
		mustContain(t, ag.root, "/etc/needs-reboot.conf", "x")
	}

	// 3. Drift on worker-0 makes it Degraded within a second; the next rollout stops there.
	drifted := filepath.Join(agents[0].root, "etc/base.conf")
	if err := os.WriteFile(drifted, []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, time.Minute, "worker-0 Degraded by drift", func() (bool, string) {
		n := node(t, ctx, "worker-0")
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDegraded) &&
			strings.Contains(n.Annotations[protocol.ReasonAnnotation], "/etc/base.conf"), nodeSummary(n)
	})
	// How soon is the benchmarks' to measure (a loaded machine makes any bound here a flake);
	// the minute above bounds only a drift that would never be reported.
	t.Logf("drift reported on the Node after %v", time.Since(start).Round(time.Millisecond))
	create(t, ctx, machineConfig("70-worker-more", map[string]string{"/etc/containers/registries.d/a.yaml": "a"}))
	r3 := awaitTarget(t, ctx, r2)
	time.Sleep(3 * time.Second)
	for _, ag := range agents[1:] {
		if n := node(t, ctx, ag.name); n.Annotations[protocol.CurrentConfigAnnotation] != r2 {
			t.Errorf("rollout went past the degraded node: %s", nodeSummary(n))
		}
	}
	mustContain(t, agents[0].root, "/etc/base.conf", "edited by hand") // never overwritten

	// Restoring the file returns worker-0 to Done by itself, and the rollout completes.
	if err := os.WriteFile(drifted, []byte("base"), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitAllDone(t, ctx, agents, r3)
}

func create(t testing.TB, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

func awaitTarget(t testing.TB, ctx context.Context, previous string) string {
	t.Helper()
	var target string
	eventually(t, 30*time.Second, "a new rendered config", func() (bool, string) {
		target = poolTarget(t, ctx)
		p := &mcfgv1.MachineConfigPool{}
		_ = env.Client.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, p)
		return target != "" && target != previous, fmt.Sprintf("target=%s conditions=%+v", target, p.Status.Conditions)
	})
	return target
}

func awaitAllDone(t testing.TB, ctx context.Context, agents []*agent, config string) {
	t.Helper()
	eventually(t, 90*time.Second, "every node Done in "+config, func() (bool, string) {
		var states []string
		all := true
		for _, ag := range agents {
			n := node(t, ctx, ag.name)
			a := n.Annotations
			if a[protocol.CurrentConfigAnnotation] != config || a[protocol.DesiredConfigAnnotation] != config || a[protocol.StateAnnotation] != string(protocol.NodeDone) {
				all = false
			}
			states = append(states, nodeSummary(n))
		}
		return all, strings.Join(states, "\n")
	})
}

func mustContain(t testing.TB, root, p, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil || string(data) != want {
		t.Errorf("%s in %s = %q, %v; want %q", p, root, data, err, want)
	}
}
