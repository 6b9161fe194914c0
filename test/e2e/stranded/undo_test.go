package stranded

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// rolloutUndo: a file MachineConfig rolls out (each worker reboots once) to B; `mco rollout
// undo mcp/worker`, run as a user would, returns every worker to A through the normal path
// (each reboots once more), the pool held on A naming B; deleting the MachineConfig renders A
// again, which ends the hold with no further reboot.
func rolloutUndo(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	mco := testenv.RequireMCO(t)
	kubeconfig := filepath.Join(cl.Dir, "kubeconfig")
	a := cl.Pool(t, ctx).Spec.Configuration.Name
	boots := cl.WorkerBoots(t, ctx)
	machines := int32(len(boots))
	checkBoots := func(more int, when string) {
		t.Helper()
		for name, before := range boots {
			if got := cl.Boots(t, name); got != before+more {
				t.Errorf("%s: %s booted %d times, want %d", when, name, got-before, more)
			}
		}
	}

	const path = "/etc/mco-undo-test"
	mc := clustertest.FileConfig("99-undo", path, "rolled out, then undone\n")
	if err := cl.C.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.IgnoreNotFound(cl.C.Delete(context.Background(), mc)) }()
	b := cl.WaitUpdatedWith(t, ctx, a, machines, mc.Name)
	checkBoots(1, "rolling out "+b)
	if prev := cl.Pool(t, ctx).Annotations[rolloutv1.PreviousConfigurationAnnotation]; prev != a {
		t.Fatalf("previous configuration %q after the rollout to %s, want %s", prev, b, a)
	}

	// The plan first, then the undo.
	out, err := clustertest.Run(ctx, mco, "rollout", "undo", "mcp/worker", "--dry-run", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); !strings.Contains(s, b+" → "+a) || !strings.Contains(s, "drain+reboot") || !strings.Contains(s, "File "+path+" (removed)") {
		t.Errorf("mco rollout undo --dry-run does not show the undo's plan (%s → %s, drain+reboot, %s removed):\n%s", b, a, path, s)
	}
	start := time.Now()
	if out, err = clustertest.Run(ctx, mco, "rollout", "undo", "mcp/worker", "--kubeconfig", kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", out)
	var pool *mcfgv1.MachineConfigPool
	clustertest.Eventually(t, 4*time.Minute, "every worker back on "+a, func() bool {
		pool = cl.Pool(t, ctx)
		return pool.Spec.Configuration.Name == a && pool.Status.Configuration.Name == a &&
			pool.Status.UpdatedMachineCount == machines && poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	t.Logf("undo: %s from `mco rollout undo` to the pool Updated on %s", time.Since(start).Round(time.Second), a)
	checkBoots(2, "undoing "+b)
	for name := range boots {
		if got := cl.Node(t, ctx, name).Annotations[protocol.CurrentConfigAnnotation]; got != a {
			t.Errorf("%s runs %s after the undo, want %s", name, got, a)
		}
		if got := cl.NodeFile(ctx, name, path); got != "" {
			t.Errorf("%s still has %s after the undo: %q", name, path, got)
		}
	}
	if c := poolcondition.Get(&pool.Status, poolcondition.RolledBack); c == nil || c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, b+" was rolled back by mco rollout undo") {
		t.Errorf("RolledBack condition %+v, want True naming %s as rolled back", c, b)
	}

	// The admin deletes the MachineConfig: the newest render is A again, so the hold ends.
	if err := cl.C.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	clustertest.Eventually(t, 2*time.Minute, "the hold ended, the pool Updated on "+a, func() bool {
		pool = cl.Pool(t, ctx)
		_, held := pool.Annotations[rolloutv1.RollbackAnnotation]
		return !held && !poolcondition.IsTrue(&pool.Status, poolcondition.RolledBack) && pool.Spec.Configuration.Name == a &&
			pool.Status.Configuration.Name == a && pool.Status.UpdatedMachineCount == machines && poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	checkBoots(2, "ending the hold")
}
