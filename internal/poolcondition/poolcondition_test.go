package poolcondition

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetKeepsTransitionTimeUnlessStatusFlips(t *testing.T) {
	t0, t1, t2 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0)), metav1.NewTime(time.Unix(300, 0))
	var st mcfgv1.MachineConfigPoolStatus
	if !Set(&st, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, "R", "m1", t0) {
		t.Fatal("adding a condition is a change")
	}
	if !Set(&st, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, "R", "m2", t1) {
		t.Fatal("a new message is a change")
	}
	if got := Get(&st, mcfgv1.MachineConfigPoolRenderDegraded).LastTransitionTime; !got.Equal(&t0) {
		t.Fatalf("transition time moved without a flip: %v", got)
	}
	if Set(&st, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, "R", "m2", t2) {
		t.Fatal("an identical condition is no change")
	}
	Set(&st, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionFalse, "", "", t2)
	if got := Get(&st, mcfgv1.MachineConfigPoolRenderDegraded).LastTransitionTime; !got.Equal(&t2) {
		t.Fatalf("flip did not move transition time: %v", got)
	}
}

func TestDegradedSummarisesRenderAndNode(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		render, node corev1.ConditionStatus
		want         corev1.ConditionStatus
		msg          string
	}{
		{corev1.ConditionFalse, corev1.ConditionFalse, corev1.ConditionFalse, ""},
		{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionTrue, "render broke"},
		{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionTrue, "node broke"},
		{corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionTrue, "render broke"},
	} {
		var st mcfgv1.MachineConfigPoolStatus
		Set(&st, mcfgv1.MachineConfigPoolRenderDegraded, tc.render, "r", "render broke", now)
		Set(&st, mcfgv1.MachineConfigPoolNodeDegraded, tc.node, "n", "node broke", now)
		SetDegraded(&st, now)
		d := Get(&st, mcfgv1.MachineConfigPoolDegraded)
		if d.Status != tc.want || (tc.want == corev1.ConditionTrue && d.Message != tc.msg) {
			t.Errorf("render=%s node=%s: Degraded=%s %q", tc.render, tc.node, d.Status, d.Message)
		}
	}
}
