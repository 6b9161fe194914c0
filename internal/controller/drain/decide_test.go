package drain

import (
	"testing"
	"time"
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
