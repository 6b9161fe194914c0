package render

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/rollback"
)

// TestRenderStatusApply: one value sets every condition the controller owns, so a reconcile
// writes them in one patch, and a second apply of the same value changes nothing (no write, no
// event).
func TestRenderStatusApply(t *testing.T) {
	now := metav1.NewTime(time.Unix(100, 0))
	held := &rollback.Condition{Status: corev1.ConditionTrue, Reason: rollback.ReasonHeld, Message: "held"}
	for _, tc := range []struct {
		name                   string
		status                 renderStatus
		wantRenderDegraded     corev1.ConditionStatus
		wantDegraded           corev1.ConditionStatus
		wantRolledBack         corev1.ConditionStatus // "" for no condition
		wantWarnings           corev1.ConditionStatus // "" for no condition
		wantWarningsChangeTold bool
	}{
		{name: "rendered, no warnings", status: renderStatus{},
			wantRenderDegraded: corev1.ConditionFalse, wantDegraded: corev1.ConditionFalse},
		{name: "rendered with warnings, held", status: renderStatus{held: held, warnings: "w1"},
			wantRenderDegraded: corev1.ConditionFalse, wantDegraded: corev1.ConditionFalse,
			wantRolledBack: corev1.ConditionTrue, wantWarnings: corev1.ConditionTrue, wantWarningsChangeTold: true},
		{name: "failed: warnings left as they are", status: renderStatus{failure: "bad", warnings: "ignored"},
			wantRenderDegraded: corev1.ConditionTrue, wantDegraded: corev1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st mcfgv1.MachineConfigPoolStatus
			changed, warningsChanged := tc.status.apply(&st, now)
			if !changed || warningsChanged != tc.wantWarningsChangeTold {
				t.Errorf("changed, warningsChanged = %v, %v; want true, %v", changed, warningsChanged, tc.wantWarningsChangeTold)
			}
			for _, want := range []struct {
				t      mcfgv1.MachineConfigPoolConditionType
				status corev1.ConditionStatus
			}{
				{mcfgv1.MachineConfigPoolRenderDegraded, tc.wantRenderDegraded},
				{mcfgv1.MachineConfigPoolDegraded, tc.wantDegraded},
				{poolcondition.RolledBack, tc.wantRolledBack},
				{poolcondition.RenderWarnings, tc.wantWarnings},
			} {
				got := corev1.ConditionStatus("")
				if c := poolcondition.Get(&st, want.t); c != nil {
					got = c.Status
				}
				if got != want.status {
					t.Errorf("%s = %q, want %q", want.t, got, want.status)
				}
			}
			if changed, warningsChanged := tc.status.apply(&st, now); changed || warningsChanged {
				t.Errorf("applying the same status again changed it (%v, %v)", changed, warningsChanged)
			}
		})
	}
}
