package poolcondition

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetRenderWarnings(t *testing.T) {
	now := metav1.NewTime(time.Unix(100, 0))
	for _, tc := range []struct {
		name       string
		before     *mcfgv1.MachineConfigPoolCondition
		summary    string
		changed    bool
		wantStatus corev1.ConditionStatus // "" for no condition
		wantMsg    string
	}{
		{name: "never warned, none now: no condition", summary: "", changed: false},
		{name: "first warnings", summary: "w1", changed: true, wantStatus: corev1.ConditionTrue, wantMsg: "w1"},
		{name: "same warnings again: no change (no event)", before: &mcfgv1.MachineConfigPoolCondition{Type: RenderWarnings, Status: corev1.ConditionTrue, Reason: ReasonIgnitionWarnings, Message: "w1"},
			summary: "w1", changed: false, wantStatus: corev1.ConditionTrue, wantMsg: "w1"},
		{name: "other warnings", before: &mcfgv1.MachineConfigPoolCondition{Type: RenderWarnings, Status: corev1.ConditionTrue, Reason: ReasonIgnitionWarnings, Message: "w1"},
			summary: "w2", changed: true, wantStatus: corev1.ConditionTrue, wantMsg: "w2"},
		{name: "warnings gone: False", before: &mcfgv1.MachineConfigPoolCondition{Type: RenderWarnings, Status: corev1.ConditionTrue, Reason: ReasonIgnitionWarnings, Message: "w1"},
			summary: "", changed: true, wantStatus: corev1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st mcfgv1.MachineConfigPoolStatus
			if tc.before != nil {
				st.Conditions = append(st.Conditions, *tc.before)
			}
			if got := SetRenderWarnings(&st, tc.summary, now); got != tc.changed {
				t.Errorf("changed = %v, want %v", got, tc.changed)
			}
			c := Get(&st, RenderWarnings)
			switch {
			case tc.wantStatus == "" && c != nil:
				t.Errorf("condition %+v, want none", c)
			case tc.wantStatus != "" && (c == nil || c.Status != tc.wantStatus || c.Message != tc.wantMsg):
				t.Errorf("condition %+v, want %s %q", c, tc.wantStatus, tc.wantMsg)
			}
			// Warnings never degrade a pool.
			SetDegraded(&st, now)
			if IsTrue(&st, mcfgv1.MachineConfigPoolDegraded) {
				t.Error("Degraded set by RenderWarnings")
			}
		})
	}
}
