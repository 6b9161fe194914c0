package protocol

import (
	"testing"
	"time"
)

func TestTargetedRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 22, 0, 5, 0, time.FixedZone("x", 3600))
	v := Targeted("rendered-worker-abc", at)
	if v != "rendered-worker-abc at 2026-11-29T21:00:05Z" {
		t.Errorf("Targeted = %q", v)
	}
	config, got, ok := ParseTargeted(v)
	if !ok || config != "rendered-worker-abc" || !got.Equal(at) {
		t.Errorf("ParseTargeted(%q) = %q %s %v", v, config, got, ok)
	}
	for _, bad := range []string{"", "rendered-x", " at 2026-11-29T21:00:05Z", "rendered-x at yesterday"} {
		if _, _, ok := ParseTargeted(bad); ok {
			t.Errorf("ParseTargeted(%q) accepted", bad)
		}
	}
}
