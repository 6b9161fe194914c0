package statusview

import (
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
)

func TestWithDrainSteps(t *testing.T) {
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	pool := mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pace": "yes"}},
		Spec:       mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}}},
	}
	pool.Spec.Configuration.Name = "new"
	worker := func(name, current, desired string, ann map[string]string) corev1.Node {
		a := map[string]string{protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: "Done"}
		for k, v := range ann {
			a[k] = v
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.WorkerRoleLabel: ""}, Annotations: a},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	blocked := worker("a", "old", "new", map[string]string{
		protocol.StateAnnotation:             "Working",
		protocol.DesiredDrainAnnotation:      protocol.DrainRequest("new"),
		protocol.DrainBlockedSinceAnnotation: now.Add(-5 * time.Second).Format(time.RFC3339),
	})
	blocked.Spec.Unschedulable = true
	skipped := worker("b", "old", "old", map[string]string{rolloutv1.DrainSkippedAnnotation: drainpolicy.SkipRecord("new", "pod ns/db-0 cannot be evicted", now.Add(-time.Minute))})
	waiting := worker("c", "old", "old", nil)
	nodes := []corev1.Node{blocked, skipped, waiting}
	policy := rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: rolloutv1.MachineConfigPoolRolloutSpec{
		PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pace": "yes"}},
		Drain:        &rolloutv1.DrainPolicy{BlockedTimeout: &metav1.Duration{Duration: 20 * time.Second}, OnBlocked: rolloutv1.DrainSkip},
	}}
	rows := WithDrainSteps(Nodes([]mcfgv1.MachineConfigPool{pool}, nodes), []mcfgv1.MachineConfigPool{pool}, nodes, []rolloutv1.MachineConfigPoolRollout{policy}, now)
	want := map[string]string{
		"a": "drain blocked for 5s; waiting, skip at 2026-11-29T07:00:15Z (in 15s; spec.drain.blockedTimeout 20s)",
		"b": "drain for new skipped at 2026-11-29T06:59:00Z (spec.drain.onBlocked Skip); tried again after the pool's other nodes; it was blocked by: pod ns/db-0 cannot be evicted",
		"c": "",
	}
	for _, r := range rows {
		if r.Reason != want[r.Name] {
			t.Errorf("node %s: Reason %q, want %q", r.Name, r.Reason, want[r.Name])
		}
	}
	// Without the policy the blocked drain waits, and says so.
	rows = WithDrainSteps(Nodes([]mcfgv1.MachineConfigPool{pool}, nodes), []mcfgv1.MachineConfigPool{pool}, nodes, nil, now)
	if !strings.Contains(rows[0].Reason, "no spec.drain") {
		t.Errorf("node a without a policy: %q", rows[0].Reason)
	}
}
