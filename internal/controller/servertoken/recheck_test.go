package servertoken

import (
	"testing"
	"time"
)

// A rotation due in a month is looked at again within the hour (suspended time is not counted
// by timers); a sooner one when it is due.
func TestRecheckIsAtMostAnHour(t *testing.T) {
	for due, want := range map[time.Duration]time.Duration{
		0:                   maxRecheck,
		-time.Second:        maxRecheck,
		time.Minute:         time.Minute,
		maxRecheck:          maxRecheck,
		30 * 24 * time.Hour: maxRecheck,
	} {
		if got := recheck(due); got != want {
			t.Errorf("recheck(%v) = %v, want %v", due, got, want)
		}
	}
}
