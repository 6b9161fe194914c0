package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/protocol"
)

func node(name, current, desired string, state protocol.NodeState, ready bool) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.WorkerRoleLabel: ""}, Annotations: map[string]string{
			protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: string(state),
		}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}},
	}
}

func TestAttention(t *testing.T) {
	degraded := node("worker-1", "rendered-a", "rendered-b", protocol.NodeDegraded, true)
	degraded.Annotations[protocol.ReasonAnnotation] = "drift: /etc/chrony.conf changed\nmore"
	cordoned := node("worker-2", "rendered-b", "rendered-b", protocol.NodeDone, true)
	cordoned.Spec.Unschedulable = true
	pressed := node("worker-4", "rendered-b", "rendered-b", protocol.NodeDone, true)
	pressed.Status.Conditions = append(pressed.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue})
	pool := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: mcfgv1.MachineConfigPoolSpec{Paused: true}}
	pool.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{
		{Type: mcfgv1.MachineConfigPoolNodeDegraded, Status: corev1.ConditionTrue, Message: "node worker-1 is degraded"},
		{Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionTrue},
		{Type: "NodesAwaitingAdoption", Status: corev1.ConditionTrue, Message: "worker-9 waits for approval: mco adopt worker-9"},
	}
	got := Attention([]mcfgv1.MachineConfigPool{pool}, []corev1.Node{
		cordoned, degraded,
		node("worker-0", "rendered-b", "rendered-b", protocol.NodeDone, true),
		node("worker-3", "rendered-b", "rendered-b", protocol.NodeDone, false),
		pressed,
		node("worker-5", "rendered-b", "rendered-b", protocol.NodeWorking, true),
	})
	want := []string{
		"pool worker: NodeDegraded: node worker-1 is degraded",
		"pool worker: NodesAwaitingAdoption: worker-9 waits for approval: mco adopt worker-9",
		"pool worker: paused: no node gets a new config until spec.paused is false",
		"node worker-1: Degraded: drift: /etc/chrony.conf changed; on rendered-a, desired rendered-b (state Degraded)",
		"node worker-2: cordoned",
		"node worker-3: not Ready (or disk pressure, or network unavailable)",
		"node worker-4: not Ready (or disk pressure, or network unavailable)",
		"node worker-5: on its desired config rendered-b, but state Working, not yet Done",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Attention =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSummary(t *testing.T) {
	pool := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Spec.Configuration.Name = "rendered-worker-b"
	pool.Spec.MachineConfigSelector = &metav1.LabelSelector{}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}}
	pool.Status.MachineCount = 1
	in := SummaryInput{
		Collected: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), Since: time.Hour,
		Versions: []string{"mco (this CLI): mco v1", "Kubernetes: v1.36.3"}, LogSource: "dev cluster in /d",
		Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: []corev1.Node{node("worker-0", "rendered-worker-a", "rendered-worker-b", protocol.NodeWorking, true)},
		Failures: 2, Redactions: 1, PoolsCollected: true, NodesCollected: true,
	}
	got := Summary(in)
	for _, want := range []string{
		"collected 2026-01-01T12:00:00Z", "last 1h0m0s", "dev cluster in /d", "Kubernetes: v1.36.3",
		"worker-0", "rendered-worker-b", // the status tables
		"node worker-0: on rendered-worker-a, desired rendered-worker-b (state Working)",
		"2 parts could not be collected: see errors.txt", "1 secret values",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	in.Failures, in.Nodes[0] = 0, node("worker-0", "rendered-worker-b", "rendered-worker-b", protocol.NodeDone, true)
	got = Summary(in)
	if !strings.Contains(got, "Needs attention: nothing") || !strings.Contains(got, "Every part was collected.") {
		t.Errorf("a healthy cluster's summary:\n%s", got)
	}
}

func TestExplanationsOfPoolsAndNodesNeedingAttention(t *testing.T) {
	pool := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Spec.Configuration.Name = "rendered-b"
	pool.Spec.MachineConfigSelector = &metav1.LabelSelector{}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}}
	degraded := node("worker-1", "rendered-a", "rendered-b", protocol.NodeDegraded, true)
	degraded.Annotations[protocol.ReasonAnnotation] = "drift: /etc/chrony.conf changed"
	xs := Explanations(explain.Cluster{
		Now:   time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		Pools: []mcfgv1.MachineConfigPool{pool},
		Nodes: []corev1.Node{node("worker-0", "rendered-b", "rendered-b", protocol.NodeDone, true), degraded},
	})
	var objects []string
	for _, x := range xs {
		objects = append(objects, x.Object)
	}
	if want := []string{"mcp/worker", "node/worker-1"}; !slices.Equal(objects, want) {
		t.Fatalf("explained %v, want %v (every pool, only the node needing attention)", objects, want)
	}
	if ExplanationFile(xs[1]) != "explain/node-worker-1.txt" {
		t.Errorf("file %s", ExplanationFile(xs[1]))
	}
	got := Summary(SummaryInput{Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: []corev1.Node{degraded}, Explanations: xs, PoolsCollected: true, NodesCollected: true})
	if !strings.Contains(got, "  node/worker-1: "+xs[1].Summary) {
		t.Errorf("summary lacks node/worker-1's explanation %q:\n%s", xs[1].Summary, got)
	}
}
