package bootimage

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConditions(t *testing.T) {
	find := func(conds []metav1.Condition, typ string) metav1.Condition {
		for _, c := range conds {
			if c.Type == typ {
				return c
			}
		}
		t.Fatalf("no %s condition", typ)
		return metav1.Condition{}
	}
	for _, tc := range []struct {
		name                   string
		pass                   Pass
		progressing, degraded  metav1.ConditionStatus
		progressMsg, degradMsg string
	}{
		{name: "settled", pass: Pass{Tally: Tally{Enrolled: 5, UpToDate: 2, Skipped: []string{"owned (OwnedByAnotherController)"}, Errors: []string{"x: boom", "y: hot loop"}}},
			progressing: metav1.ConditionFalse, degraded: metav1.ConditionTrue,
			progressMsg: "Reconciled 3 of 5 MachineSets (1 skipped); skipped: owned (OwnedByAnotherController)", degradMsg: "2 of 5 MachineSets degraded: x: boom; y: hot loop"},
		{name: "patched", pass: Pass{Tally: Tally{Enrolled: 2, UpToDate: 1, Patched: 1}},
			progressing: metav1.ConditionTrue, degraded: metav1.ConditionFalse, progressMsg: "Reconciled 2 of 2 MachineSets (0 skipped); patched 1", degradMsg: "0 of 2 MachineSets degraded"},
		{name: "disabled", pass: Pass{Disabled: true}, progressing: metav1.ConditionFalse, degraded: metav1.ConditionFalse,
			progressMsg: "Boot image updates are disabled for MachineSets", degradMsg: "Boot image updates are disabled for MachineSets"},
		{name: "no source", pass: Pass{SourceErr: errors.New("ConfigMap x/coreos-bootimages not found")}, progressing: metav1.ConditionFalse, degraded: metav1.ConditionTrue,
			progressMsg: "Boot images cannot be updated: ConfigMap x/coreos-bootimages not found", degradMsg: "ConfigMap x/coreos-bootimages not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := Conditions(tc.pass, 7)
			p, d := find(conds, ConditionProgressing), find(conds, ConditionDegraded)
			if p.Status != tc.progressing || p.Message != tc.progressMsg || p.ObservedGeneration != 7 {
				t.Errorf("progressing %s %q", p.Status, p.Message)
			}
			if d.Status != tc.degraded || d.Message != tc.degradMsg {
				t.Errorf("degraded %s %q", d.Status, d.Message)
			}
			if tc.pass.Degraded() != (tc.degraded == metav1.ConditionTrue) {
				t.Error("Degraded() disagrees with the condition")
			}
		})
	}
	many := Tally{Enrolled: 20}
	for i := 0; i < 20; i++ {
		many.Errors = append(many.Errors, "e")
	}
	if msg := find(Conditions(Pass{Tally: many}, 1), ConditionDegraded).Message; !strings.HasSuffix(msg, "and 10 more") {
		t.Errorf("long error lists are not capped: %s", msg)
	}
}
