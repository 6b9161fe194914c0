package node

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// A pool's status is written at once when anything but its counts changed, and when only its
// counts changed, at most once per countsInterval.
func TestStatusWrite(t *testing.T) {
	now := metav1.Now()
	base := func() *mcfgv1.MachineConfigPoolStatus {
		s := &mcfgv1.MachineConfigPoolStatus{MachineCount: 10, UpdatedMachineCount: 3, ReadyMachineCount: 3, UnavailableMachineCount: 1}
		s.Configuration.Name = "rendered-a"
		poolcondition.Set(s, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionFalse, "", "", now)
		return s
	}
	cases := []struct {
		name      string
		change    func(*mcfgv1.MachineConfigPoolStatus)
		sinceLast time.Duration
		now       bool
		wait      time.Duration
	}{
		{name: "unchanged", change: func(*mcfgv1.MachineConfigPoolStatus) {}, sinceLast: time.Hour},
		{name: "counts, last write long ago", change: func(s *mcfgv1.MachineConfigPoolStatus) { s.UpdatedMachineCount++ }, sinceLast: time.Hour, now: true},
		{name: "counts, just written", change: func(s *mcfgv1.MachineConfigPoolStatus) { s.UpdatedMachineCount++ }, sinceLast: 300 * time.Millisecond, wait: countsInterval - 300*time.Millisecond},
		{name: "counts, interval over", change: func(s *mcfgv1.MachineConfigPoolStatus) { s.ReadyMachineCount-- }, sinceLast: countsInterval, now: true},
		{name: "degraded count with its condition, just written", sinceLast: time.Millisecond, now: true, change: func(s *mcfgv1.MachineConfigPoolStatus) {
			s.DegradedMachineCount++
			poolcondition.Set(s, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionTrue, "1 nodes are reporting degraded status on sync", "Node n failed", now)
		}},
		{name: "completed, just written", sinceLast: time.Millisecond, now: true, change: func(s *mcfgv1.MachineConfigPoolStatus) {
			s.UpdatedMachineCount, s.ReadyMachineCount, s.UnavailableMachineCount = 10, 10, 0
			s.Configuration.Name = "rendered-b"
			poolcondition.Set(s, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionTrue, "", "All nodes are updated with MachineConfig rendered-b", now)
		}},
		{name: "observed generation, just written", sinceLast: time.Millisecond, now: true, change: func(s *mcfgv1.MachineConfigPoolStatus) { s.ObservedGeneration++ }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			have, want := base(), base()
			tc.change(want)
			now, wait := statusWrite(have, want, tc.sinceLast)
			if now != tc.now || wait != tc.wait {
				t.Errorf("statusWrite = %v, %v; want %v, %v", now, wait, tc.now, tc.wait)
			}
		})
	}
}
