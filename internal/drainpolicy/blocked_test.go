package drainpolicy

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

func node(ann map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1", Annotations: ann}}
}

func TestRead(t *testing.T) {
	n := node(map[string]string{rolloutv1.DrainBlockedForAnnotation: "40", protocol.DrainBlockedSinceAnnotation: t0.Add(-15 * time.Second).Format(time.RFC3339)})
	b := Read(n)
	if !b.Now() || b.Before != 40*time.Second || b.Stint(t0) != 15*time.Second || b.Total(t0) != 55*time.Second || b.Seconds(t0) != "55" {
		t.Errorf("Read = %+v: stint %s, total %s, seconds %s", b, b.Stint(t0), b.Total(t0), b.Seconds(t0))
	}
	if b := Read(node(map[string]string{rolloutv1.DrainBlockedForAnnotation: "x", protocol.DrainBlockedSinceAnnotation: "yesterday"})); b != (Blocked{}) {
		t.Errorf("unparsable values: %+v, want none", b)
	}
	if b := (Blocked{Since: t0.Add(time.Minute)}); b.Stint(t0) != 0 {
		t.Errorf("a start in the future counts %s", b.Stint(t0))
	}
}

func TestSkippedAndStale(t *testing.T) {
	rec := SkipRecord("rendered-worker-b", "pod ns/p cannot be evicted", t0)
	n := node(map[string]string{rolloutv1.DrainSkippedAnnotation: rec, rolloutv1.DrainBlockedForAnnotation: "20"})
	if s, ok := Skipped(n); !ok || s.Config != "rendered-worker-b" || s.At != "2026-11-29T06:00:00Z" || s.Blocking != "pod ns/p cannot be evicted" {
		t.Errorf("Skipped = %+v, %v", s, ok)
	}
	if !SkippedFor(n, "rendered-worker-b") || SkippedFor(n, "rendered-worker-c") || SkippedFor(n, "") {
		t.Error("SkippedFor names the wrong target")
	}
	if SkippedFor(node(map[string]string{rolloutv1.DrainSkippedAnnotation: "{"}), "rendered-worker-b") {
		t.Error("an unreadable record counts as a skip")
	}
	both := []string{rolloutv1.DrainSkippedAnnotation, rolloutv1.DrainBlockedForAnnotation}
	cases := []struct {
		name   string
		n      *corev1.Node
		target string
		done   bool
		want   []string
	}{
		{"skipped for the target, waiting", n, "rendered-worker-b", false, nil},
		{"done on the target", n, "rendered-worker-b", true, both},
		{"the target changed", n, "rendered-worker-c", false, both},
		{"blocked time only, still draining", node(map[string]string{rolloutv1.DrainBlockedForAnnotation: "20"}), "rendered-worker-b", false, nil},
		{"blocked time only, done", node(map[string]string{rolloutv1.DrainBlockedForAnnotation: "20"}), "rendered-worker-b", true, []string{rolloutv1.DrainBlockedForAnnotation}},
		{"nothing", node(nil), "rendered-worker-b", true, nil},
	}
	for _, c := range cases {
		if got := Stale(c.n, c.target, c.done); !slices.Equal(got, c.want) {
			t.Errorf("%s: Stale = %v, want %v", c.name, got, c.want)
		}
	}
}
