package statusview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

func node(name string, annotations map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations,
		Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}}
}

func TestNodePhase(t *testing.T) {
	const target, old = "rendered-worker-new", "rendered-worker-old"
	for _, tc := range []struct {
		name string
		a    map[string]string
		want Phase
	}{
		{"on target", map[string]string{protocol.CurrentConfigAnnotation: target, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Done"}, PhaseDone},
		{"not yet targeted", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: old, protocol.StateAnnotation: "Done"}, PhaseWaiting},
		{"targeted, agent idle", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Done"}, PhaseQueued},
		{"applying", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Working"}, PhaseApplying},
		{"draining", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Working", protocol.DesiredDrainAnnotation: "drain-" + target}, PhaseDraining},
		{"drained", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Working", protocol.DesiredDrainAnnotation: "drain-" + target, protocol.LastAppliedDrainAnnotation: "drain-" + target}, PhaseCordoned},
		{"rebooting", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Working", protocol.PostConfigActionAnnotation: "Rebooting"}, PhaseRebooting},
		{"degraded", map[string]string{protocol.CurrentConfigAnnotation: old, protocol.DesiredConfigAnnotation: target, protocol.StateAnnotation: "Degraded"}, PhaseDegraded},
	} {
		n := node("n", tc.a)
		if got := NodePhase(&n, target); got != tc.want {
			t.Errorf("%s: phase %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestTablesAndFrame(t *testing.T) {
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	worker.Spec.Configuration.Name = "rendered-worker-new"
	worker.Status.MachineCount, worker.Status.UpdatedMachineCount = 3, 1
	worker.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionTrue}}
	nodes := []corev1.Node{
		node("w1", map[string]string{protocol.CurrentConfigAnnotation: "rendered-worker-new", protocol.DesiredConfigAnnotation: "rendered-worker-new", protocol.StateAnnotation: "Done"}),
		node("w2", map[string]string{protocol.CurrentConfigAnnotation: "old", protocol.DesiredConfigAnnotation: "rendered-worker-new", protocol.StateAnnotation: "Degraded", protocol.ReasonAnnotation: "drift: /etc/chrony.conf changed\nmore"}),
		node("w3", map[string]string{protocol.CurrentConfigAnnotation: "old", protocol.DesiredConfigAnnotation: "old", protocol.StateAnnotation: "Done"}),
	}
	rows := Nodes([]mcfgv1.MachineConfigPool{*worker}, nodes)
	var out bytes.Buffer
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{*worker}, nil), rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"worker  rendered-worker-new  1/3", "Updating", "w2    worker  old", "degraded  drift: /etc/chrony.conf changed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	frame := RolloutFrame(worker, rows, Pacing{}, time.Time{})
	if !strings.Contains(frame, "[##########--------------------] 1/3 nodes updated") || !strings.Contains(frame, "w2") || strings.Contains(frame, "w3") {
		t.Errorf("frame:\n%s", frame)
	}
	if poolcondition.RolloutOutcome(worker) != poolcondition.InProgress {
		t.Error("an updating pool is in progress")
	}
	worker.Status.Conditions = append(worker.Status.Conditions, mcfgv1.MachineConfigPoolCondition{Type: mcfgv1.MachineConfigPoolDegraded, Status: corev1.ConditionTrue})
	if poolcondition.RolloutOutcome(worker) != poolcondition.Failed {
		t.Error("a degraded pool has failed")
	}
	worker.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: mcfgv1.MachineConfigPoolUpdated, Status: corev1.ConditionTrue}}
	worker.Status.Configuration.Name = "rendered-worker-new"
	if poolcondition.RolloutOutcome(worker) != poolcondition.Complete {
		t.Error("an updated pool on its target is complete")
	}
}

// A node no pool selects is listed with the pool it is in ("-") and which label each pool
// wants: the kubeadm worker an admin would otherwise never see is missing from every pool.
func TestUnselectedNodeSaysWhy(t *testing.T) {
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	kubeadm := node("k1", nil)
	kubeadm.Labels = map[string]string{"kubernetes.io/os": "linux"}
	var out bytes.Buffer
	if err := WriteTables(&out, nil, Nodes([]mcfgv1.MachineConfigPool{*worker}, []corev1.Node{kubeadm})); err != nil {
		t.Fatal(err)
	}
	want := "k1    -     -        -        -      -      in no pool: mcp/worker selects node-role.kubernetes.io/worker=: the node has no label node-role.kubernetes.io/worker"
	if !strings.Contains(out.String(), want) {
		t.Errorf("tables lack %q:\n%s", want, out.String())
	}
}
