package drainpolicy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

var t0 = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	skip := Policy{Set: true, BlockedTimeout: 20 * time.Second, OnBlocked: rolloutv1.DrainSkip}
	skipDelete := skip
	skipDelete.DeleteAfter = time.Minute
	waitDelete := Policy{Set: true, BlockedTimeout: 10 * time.Minute, OnBlocked: rolloutv1.DrainWait, DeleteAfter: 5 * time.Minute}
	since := func(d time.Duration) Blocked { return Blocked{Since: t0.Add(-d)} }
	cases := []struct {
		name   string
		p      Policy
		b      Blocked
		others bool
		want   Step
	}{
		{"not blocked", skipDelete, Blocked{Before: time.Hour}, true, Step{Now: Wait}},
		{"default policy waits for ever", Default(), since(time.Hour), true, Step{Now: Wait, Field: fieldOnBlocked}},
		{"skip not yet due", skip, since(5 * time.Second), true, Step{Now: Wait, Next: Skip, At: t0.Add(15 * time.Second), Field: fieldBlockedTimeout}},
		{"skip due", skip, since(20 * time.Second), true, Step{Now: Skip, Field: fieldBlockedTimeout}},
		{"skip due but no other node waits", skip, since(time.Hour), false, Step{Now: Wait, Why: "no other node of the pool waits, so skipping would gain nothing"}},
		{"skip counts the stint, not earlier attempts", skipDelete, Blocked{Before: 30 * time.Second, Since: t0.Add(-10 * time.Second)}, true,
			Step{Now: Wait, Next: Skip, At: t0.Add(10 * time.Second), Field: fieldBlockedTimeout}},
		{"deletion counts every attempt", skipDelete, Blocked{Before: 40 * time.Second, Since: t0.Add(-10 * time.Second)}, false,
			Step{Now: Wait, Next: DeletePods, At: t0.Add(10 * time.Second), Field: fieldDeleteAfter, Why: "no other node of the pool waits, so skipping would gain nothing"}},
		{"deletion due", skipDelete, Blocked{Before: 40 * time.Second, Since: t0.Add(-20 * time.Second)}, false, Step{Now: DeletePods, Field: fieldDeleteAfter}},
		{"deletion before skip when both are due", skipDelete, since(2 * time.Minute), true, Step{Now: DeletePods, Field: fieldDeleteAfter}},
		{"the earlier of skip and deletion is next", Policy{Set: true, BlockedTimeout: time.Hour, OnBlocked: rolloutv1.DrainSkip, DeleteAfter: time.Minute}, since(0), true,
			Step{Now: Wait, Next: DeletePods, At: t0.Add(time.Minute), Field: fieldDeleteAfter}},
		{"wait with deletion", waitDelete, since(time.Minute), true, Step{Now: Wait, Next: DeletePods, At: t0.Add(4 * time.Minute), Field: fieldDeleteAfter}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.p, c.b, t0, c.others)
			if got != c.want {
				t.Errorf("Decide = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	if got := (Step{Now: Wait}).RequeueAfter(t0); got != 0 {
		t.Errorf("no next step: RequeueAfter = %s, want 0", got)
	}
	if got := (Step{Now: Wait, Next: Skip, At: t0.Add(7 * time.Second)}).RequeueAfter(t0); got != 7*time.Second {
		t.Errorf("RequeueAfter = %s, want 7s", got)
	}
	if got := (Step{Now: Wait, Next: Skip, At: t0.Add(-time.Second)}).RequeueAfter(t0); got != time.Second {
		t.Errorf("past step: RequeueAfter = %s, want 1s", got)
	}
}

func TestDescribe(t *testing.T) {
	p := Policy{Set: true, BlockedTimeout: 20 * time.Second, OnBlocked: rolloutv1.DrainSkip, DeleteAfter: time.Minute}
	cases := []struct {
		b      Blocked
		others bool
		want   []string
	}{
		{Blocked{Since: t0.Add(-5 * time.Second)}, true, []string{"drain blocked for 5s", "skip at 2026-11-29T06:00:15Z (in 15s; spec.drain.blockedTimeout 20s)"}},
		{Blocked{Before: 20 * time.Second, Since: t0.Add(-10 * time.Second)}, false,
			[]string{"30s in all", "delete the blocking pods at 2026-11-29T06:00:30Z (in 30s; spec.drain.deleteBlockingPodsAfter 1m0s)", "no other node of the pool waits"}},
		{Blocked{Since: t0.Add(-time.Minute)}, true, []string{"deleting the pods whose eviction is refused now"}},
		{Blocked{Since: t0.Add(-30 * time.Second)}, true, []string{"skipping the node now"}},
	}
	for _, c := range cases {
		pp := p
		if strings.Contains(c.want[0], "skipping") {
			pp.DeleteAfter = 0
		}
		got := Describe(pp, c.b, Decide(pp, c.b, t0, c.others), t0)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("Describe(%+v) = %q, want it to say %q", c.b, got, w)
			}
		}
	}
	if got := Describe(Default(), Blocked{Since: t0}, Decide(Default(), Blocked{Since: t0}, t0, true), t0); !strings.Contains(got, "no spec.drain") {
		t.Errorf("without a policy: %q", got)
	}
}

func TestCompile(t *testing.T) {
	d := func(s time.Duration) *metav1.Duration { return &metav1.Duration{Duration: s} }
	p, errs := Compile(&rolloutv1.DrainPolicy{BlockedTimeout: d(20 * time.Second), OnBlocked: rolloutv1.DrainSkip, DeleteBlockingPodsAfter: d(time.Minute)}, field.NewPath("spec", "drain"))
	if len(errs) > 0 || p != (Policy{Set: true, BlockedTimeout: 20 * time.Second, OnBlocked: rolloutv1.DrainSkip, DeleteAfter: time.Minute}) {
		t.Errorf("Compile = %+v, %v", p, errs)
	}
	if p, errs := Compile(nil, field.NewPath("spec", "drain")); len(errs) > 0 || p != Default() {
		t.Errorf("Compile(nil) = %+v, %v; want the default", p, errs)
	}
	if p, _ := Compile(&rolloutv1.DrainPolicy{}, field.NewPath("spec", "drain")); p.BlockedTimeout != 10*time.Minute || p.OnBlocked != rolloutv1.DrainWait || p.DeleteAfter != 0 {
		t.Errorf("empty spec.drain: %+v, want the defaults", p)
	}
	_, errs = Compile(&rolloutv1.DrainPolicy{BlockedTimeout: d(-time.Second), OnBlocked: "Delete", DeleteBlockingPodsAfter: d(0)}, field.NewPath("spec", "drain"))
	msg := errs.ToAggregate().Error()
	for _, w := range []string{"spec.drain.blockedTimeout", "spec.drain.onBlocked", "spec.drain.deleteBlockingPodsAfter"} {
		if !strings.Contains(msg, w) {
			t.Errorf("errors %q do not name %s", msg, w)
		}
	}
}
