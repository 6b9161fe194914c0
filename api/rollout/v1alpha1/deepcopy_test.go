package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDeepCopySharesNothing(t *testing.T) {
	yes := true
	orig := &MachineConfigPoolRollout{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Labels: map[string]string{"a": "b"}},
		Spec: MachineConfigPoolRolloutSpec{
			PoolSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "worker"}},
			Canary:             &Canary{Nodes: intstr.FromInt32(1)},
			HealthGate:         HealthGate{NodeReady: &yes, DaemonSetPodsReady: &yes},
			MaintenanceWindows: []MaintenanceWindow{{Days: []Weekday{"Sat"}, Start: "02:00", Duration: &metav1.Duration{Duration: time.Hour}}},
		},
		Status: MachineConfigPoolRolloutStatus{
			NextWindowStart: &metav1.Time{Time: time.Unix(100, 0)},
			Conditions:      []metav1.Condition{{Type: "Ready"}},
		},
	}
	cp := orig.DeepCopyObject().(*MachineConfigPoolRollout)
	cp.Labels["a"] = "changed"
	cp.Spec.PoolSelector.MatchLabels["pool"] = "changed"
	cp.Spec.Canary.Nodes = intstr.FromInt32(5)
	*cp.Spec.HealthGate.NodeReady = false
	*cp.Spec.HealthGate.DaemonSetPodsReady = false
	cp.Spec.MaintenanceWindows[0].Days[0] = "Sun"
	cp.Spec.MaintenanceWindows[0].Duration.Duration = 2 * time.Hour
	cp.Status.NextWindowStart.Time = time.Unix(200, 0)
	cp.Status.Conditions[0].Type = "changed"

	if orig.Labels["a"] != "b" || orig.Spec.PoolSelector.MatchLabels["pool"] != "worker" ||
		orig.Spec.Canary.Nodes.IntValue() != 1 || !*orig.Spec.HealthGate.NodeReady ||
		!*orig.Spec.HealthGate.DaemonSetPodsReady || orig.Spec.MaintenanceWindows[0].Days[0] != "Sat" ||
		orig.Spec.MaintenanceWindows[0].Duration.Duration != time.Hour ||
		orig.Status.NextWindowStart.Unix() != 100 || orig.Status.Conditions[0].Type != "Ready" {
		t.Fatalf("changing the copy changed the original: %+v", orig)
	}
	list := &MachineConfigPoolRolloutList{Items: []MachineConfigPoolRollout{*orig}}
	lc := list.DeepCopyObject().(*MachineConfigPoolRolloutList)
	lc.Items[0].Spec.MaintenanceWindows[0].Start = "03:00"
	if list.Items[0].Spec.MaintenanceWindows[0].Start != "02:00" {
		t.Fatal("list copy shares items")
	}
}
