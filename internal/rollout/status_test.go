package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

type counts struct{ machines, updated, ready, unavailable, degraded int32 }

func countsOf(st mcfgv1.MachineConfigPoolStatus) counts {
	return counts{st.MachineCount, st.UpdatedMachineCount, st.ReadyMachineCount, st.UnavailableMachineCount, st.DegradedMachineCount}
}

func TestStatusCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		want  counts
	}{
		{"all updated", []*corev1.Node{node("a", "new"), node("b", "new")}, counts{2, 2, 2, 0, 0}},
		{"updated but not ready", []*corev1.Node{node("a", "new", notReady), node("b", "new")}, counts{2, 2, 1, 1, 0}},
		{"updated but cordoned", []*corev1.Node{node("a", "new", cordoned)}, counts{1, 1, 0, 1, 0}},
		{"on the old config", []*corev1.Node{node("a", "old"), node("b", "new")}, counts{2, 1, 1, 0, 0}},
		{"working", []*corev1.Node{node("a", "new", inState(protocol.NodeWorking, "")), node("b", "new")}, counts{2, 1, 1, 1, 0}},
		{"degraded", []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeDegraded, "x")), node("b", "new")}, counts{2, 1, 1, 1, 1}},
		{"unreconcilable", []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeUnreconcilable, "x"))}, counts{1, 0, 0, 1, 1}},
		// Nobody has reported on these nodes: not Done, so neither updated nor available (OpenShift
		// counts them the same way).
		{"empty state is not Done", []*corev1.Node{node("a", "new", inState("", "")), node("b", "new")}, counts{2, 1, 1, 1, 0}},
		{"missing state is not Done", []*corev1.Node{node("a", "new", noState), node("b", "new")}, counts{2, 1, 1, 1, 0}},
		// The kubelet no longer reports pressure or network: not ready until it says False.
		{"disk pressure unknown", []*corev1.Node{node("a", "new", condition(corev1.NodeDiskPressure, corev1.ConditionUnknown)), node("b", "new")}, counts{2, 2, 1, 1, 0}},
		{"network unavailable unknown", []*corev1.Node{node("a", "new", condition(corev1.NodeNetworkUnavailable, corev1.ConditionUnknown)), node("b", "new")}, counts{2, 2, 1, 1, 0}},
		{"disk pressure and network reported False", []*corev1.Node{node("a", "new", condition(corev1.NodeDiskPressure, corev1.ConditionFalse), condition(corev1.NodeNetworkUnavailable, corev1.ConditionFalse))}, counts{1, 1, 1, 0, 0}},
		// Deliberately stricter than OpenShift, which counts a node with no Ready condition ready.
		{"no Ready condition", []*corev1.Node{node("a", "new", noConditions), node("b", "new")}, counts{2, 2, 1, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new", paused), Nodes: tc.nodes})
			if got := countsOf(d.Status); got != tc.want {
				t.Errorf("counts = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStatusConditions(t *testing.T) {
	now := metav1.NewTime(time.Unix(5000, 0))
	t.Run("updated moves status.configuration and keeps RenderDegraded", func(t *testing.T) {
		p := pool("worker", "new")
		p.Status.Configuration.Name = "old"
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, "RenderFailed", "mc 99-bad is invalid", now)
		d := Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "new")}, Now: now})
		if !d.Completed || d.Status.Configuration.Name != "new" {
			t.Fatalf("completed=%v configuration=%q", d.Completed, d.Status.Configuration.Name)
		}
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionTrue, "All nodes are updated with MachineConfig new")
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "")
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, "mc 99-bad is invalid")
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolDegraded, corev1.ConditionTrue, "mc 99-bad is invalid")
		if d.Status.ObservedGeneration != 3 {
			t.Errorf("observedGeneration = %d", d.Status.ObservedGeneration)
		}
		again := p.DeepCopy()
		again.Status = d.Status
		if Decide(Input{Pool: again, Nodes: []*corev1.Node{node("a", "new")}, Now: now}).Completed {
			t.Error("Completed reported twice for one arrival")
		}
	})
	t.Run("status.configuration stays until every node arrived", func(t *testing.T) {
		p := pool("worker", "new", paused)
		p.Status.Configuration.Name = "old"
		d := Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "new"), node("b", "old")}, Now: now})
		if d.Completed || d.Status.Configuration.Name != "old" {
			t.Fatalf("completed=%v configuration=%q", d.Completed, d.Status.Configuration.Name)
		}
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionFalse, "")
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "Pool is paused; will not update to new")
	})
	t.Run("updating", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "new"), Nodes: []*corev1.Node{node("a", "old")}, Now: now})
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "All nodes are updating to MachineConfig new")
	})
	t.Run("NodeDegraded names each node and its reason", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "new"), Now: now, Nodes: []*corev1.Node{
			node("b", "old", desiring("new"), inState(protocol.NodeDegraded, "failed to write /etc/x")),
			node("a", "new", inState(protocol.NodeUnreconcilable, "kernel type change")),
			node("c", "new"),
		}})
		// The failed update comes first, with the config it failed to reach, then the remedy.
		want := `Node b failed to update from old to new: "failed to write /etc/x", Node a is degraded in new: "kernel type change". ` +
			`To recover, fix or delete the MachineConfig that broke new (or the node as its reason says); the failed nodes are moved to the pool's next rendered config automatically`
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionTrue, want)
		if c := poolcondition.Get(&d.Status, mcfgv1.MachineConfigPoolNodeDegraded); c.Reason != "2 nodes are reporting degraded status on sync" {
			t.Errorf("reason %q", c.Reason)
		}
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolDegraded, corev1.ConditionTrue, want)
	})
	t.Run("NodeDegraded names at most ten nodes", func(t *testing.T) {
		var nodes []*corev1.Node
		for i := range 25 {
			nodes = append(nodes, node(fmt.Sprintf("n%02d", i), "new", inState(protocol.NodeDegraded, "r")))
		}
		d := Decide(Input{Pool: pool("worker", "new"), Now: now, Nodes: nodes})
		msg := poolcondition.Get(&d.Status, mcfgv1.MachineConfigPoolNodeDegraded).Message
		if strings.Count(msg, "is degraded in new") != 10 || !strings.HasSuffix(msg, "and 15 more") {
			t.Errorf("message %q", msg)
		}
	})
	t.Run("DrainBlocked names node, pod and budget", func(t *testing.T) {
		blocked := node("a", "old", desiring("new"), inState(protocol.NodeWorking, ""))
		blocked.Annotations[protocol.DrainBlockedAnnotation] = "pod app/web-0 blocked by PodDisruptionBudget app/web-pdb"
		d := Decide(Input{Pool: pool("worker", "new"), Now: now, Nodes: []*corev1.Node{blocked}})
		wantCond(t, d.Status, poolcondition.DrainBlocked, corev1.ConditionTrue, "Drain of node a is blocked: pod app/web-0 blocked by PodDisruptionBudget app/web-pdb")
		wantCond(t, d.Status, mcfgv1.MachineConfigPoolDegraded, corev1.ConditionFalse, "")
	})
	t.Run("no target: counts only", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", ""), Now: now, Nodes: []*corev1.Node{node("a", "old")}})
		if d.Status.MachineCount != 1 || len(d.Status.Conditions) != 0 {
			t.Errorf("status %+v", d.Status)
		}
	})
	t.Run("counts reflect the nodes just targeted", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "new"), Now: now, Nodes: []*corev1.Node{node("a", "old"), node("b", "old")}})
		if d.Status.UnavailableMachineCount != 1 {
			t.Errorf("unavailable = %d, want 1 (the node this decision targets)", d.Status.UnavailableMachineCount)
		}
	})
}

func wantCond(t *testing.T, st mcfgv1.MachineConfigPoolStatus, ct mcfgv1.MachineConfigPoolConditionType, s corev1.ConditionStatus, msg string) {
	t.Helper()
	c := poolcondition.Get(&st, ct)
	if c == nil {
		t.Fatalf("no %s condition in %+v", ct, st.Conditions)
	}
	if c.Status != s || c.Message != msg {
		t.Errorf("%s = %s %q, want %s %q", ct, c.Status, c.Message, s, msg)
	}
}
