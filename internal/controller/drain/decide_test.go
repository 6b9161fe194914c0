package drain

import (
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/drainpolicy"
)

func TestParseRequest(t *testing.T) {
	for value, want := range map[string]Verb{
		"drain-rendered-worker-abc":    VerbDrain,
		"uncordon-rendered-worker-abc": VerbUncordon,
		"drain-":                       VerbDrain,
	} {
		if got, err := ParseRequest(value); got != want || err != nil {
			t.Errorf("ParseRequest(%q) = %q, %v; want %q", value, got, err, want)
		}
	}
	for _, bad := range []string{"", "drain", "reboot-x", "Drain-x"} {
		if _, err := ParseRequest(bad); err == nil {
			t.Errorf("ParseRequest(%q) accepted", bad)
		}
	}
}

func TestBackoff(t *testing.T) {
	const threshold = 10 * time.Minute
	for _, tc := range []struct{ age, want time.Duration }{
		{0, time.Second},
		{2 * time.Second, time.Second},
		{20 * time.Second, 5 * time.Second},
		{2 * time.Minute, 30 * time.Second},
		{9*time.Minute + 50*time.Second, 10 * time.Second}, // never past the threshold
		{time.Hour, time.Minute},
	} {
		if got := Backoff(tc.age, threshold); got != tc.want {
			t.Errorf("Backoff(%v) = %v, want %v", tc.age, got, tc.want)
		}
	}
}

func TestBlockedMessage(t *testing.T) {
	got := BlockedMessage([]Obstacle{
		{Pod: "b/slow"},
		{Pod: "a/web-1", Budgets: []string{"a/web-pdb"}, Detail: "needs 2 healthy pods and has 2"},
		{Pod: "a/web-0", Budgets: []string{"a/web-pdb"}},
	})
	want := "pod a/web-0 cannot be evicted: PodDisruptionBudget a/web-pdb; " +
		"pod a/web-1 cannot be evicted: PodDisruptionBudget a/web-pdb (needs 2 healthy pods and has 2); " +
		"pod b/slow is still terminating"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var many []Obstacle
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5", "p6", "p7"} {
		many = append(many, Obstacle{Pod: "ns/" + p})
	}
	if got := BlockedMessage(many); got[len(got)-len("and 2 more pods"):] != "and 2 more pods" {
		t.Errorf("not bounded: %q", got)
	}
}

func TestBlockedRequeueAndReportThreshold(t *testing.T) {
	for _, c := range []struct{ backoff, next, want time.Duration }{
		{time.Minute, 0, time.Minute},
		{time.Minute, 5 * time.Second, 5 * time.Second},
		{2 * time.Second, 5 * time.Second, 2 * time.Second},
	} {
		if got := BlockedRequeue(c.backoff, c.next); got != c.want {
			t.Errorf("BlockedRequeue(%s, %s) = %s, want %s", c.backoff, c.next, got, c.want)
		}
	}
	short := drainpolicy.Policy{Set: true, BlockedTimeout: 20 * time.Second}
	long := drainpolicy.Policy{Set: true, BlockedTimeout: time.Hour}
	for _, c := range []struct {
		p    drainpolicy.Policy
		want time.Duration
	}{
		{drainpolicy.Default(), 10 * time.Minute},
		{short, 20 * time.Second},
		{long, 10 * time.Minute},
	} {
		if got := ReportThreshold(10*time.Minute, c.p); got != c.want {
			t.Errorf("ReportThreshold(10m, %+v) = %s, want %s", c.p, got, c.want)
		}
	}
}
