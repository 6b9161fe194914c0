package drainpolicy

import (
	"testing"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// A node HasNotes says has none has nothing Stale would remove, for any target, done or not;
// one with a note done on the target has something.
func TestHasNotesCoversStale(t *testing.T) {
	rec := SkipRecord("rendered-worker-b", "", t0)
	for _, ann := range []map[string]string{
		nil,
		{protocol.CurrentConfigAnnotation: "rendered-worker-b", protocol.DrainBlockedSinceAnnotation: "2026-11-29T06:00:00Z"},
		{rolloutv1.DrainSkippedAnnotation: rec},
		{rolloutv1.DrainBlockedForAnnotation: "20"},
		{rolloutv1.DrainSkippedAnnotation: rec, rolloutv1.DrainBlockedForAnnotation: "20"},
		{rolloutv1.DrainSkippedAnnotation: "not a record"},
	} {
		n := node(ann)
		for _, target := range []string{"", "rendered-worker-b", "rendered-worker-c"} {
			for _, done := range []bool{false, true} {
				stale := Stale(n, target, done)
				if !HasNotes(n) && len(stale) > 0 {
					t.Errorf("%v, target %q, done %v: no notes, yet %v stale", ann, target, done, stale)
				}
				if HasNotes(n) && done && len(stale) == 0 {
					t.Errorf("%v, target %q, done: notes, none stale", ann, target)
				}
			}
		}
	}
}
