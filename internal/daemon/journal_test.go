package daemon

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/protocol"
)

func TestNextJournalAction(t *testing.T) {
	now := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	due := &stuckJournal{next: now}
	later := &stuckJournal{next: now.Add(time.Second)}
	cases := []struct {
		name             string
		stuck            *stuckJournal
		journaled, force bool
		want             journalAction
	}{
		{"nothing journaled", nil, false, false, journalNone},
		{"force file without a journal is the ordinary force path", nil, false, true, journalNone},
		{"journal cleared outside the agent", later, false, false, journalNone},
		{"journal left by a rollback in this process", nil, true, false, journalRecover},
		{"retry due", due, true, false, journalRecover},
		{"retry not due", later, true, false, journalWait},
		{"force file abandons at once", later, true, true, journalAbandon},
		{"force file abandons a journal not yet retried", nil, true, true, journalAbandon},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextJournalAction(tc.stuck, tc.journaled, tc.force, now); got != tc.want {
				t.Errorf("nextJournalAction = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRetryAfterBacksOff(t *testing.T) {
	cases := []struct {
		attempts int
		first    time.Duration
		want     time.Duration
	}{
		{1, 5 * time.Second, 5 * time.Second},
		{2, 5 * time.Second, 10 * time.Second},
		{4, 5 * time.Second, 40 * time.Second},
		{7, 5 * time.Second, 5 * time.Minute}, // 320 s capped
		{1000, 5 * time.Second, 5 * time.Minute},
		{3, 100 * time.Millisecond, 400 * time.Millisecond},
		{1, time.Hour, 5 * time.Minute},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.attempts, tc.first); got != tc.want {
			t.Errorf("retryAfter(%d, %v) = %v, want %v", tc.attempts, tc.first, got, tc.want)
		}
	}
}

// TestStuckReason: the reason says what is left, when the agent retries and what an admin can
// do; a huge error is cut, never the remedy.
func TestStuckReason(t *testing.T) {
	next := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	rollback := errors.New("rolling back /etc/x.conf: copying /etc/machine-config-daemon/journal.d/0: not a regular file")
	cases := []struct {
		name     string
		from, to string
		err      error
		want     []string
	}{
		{"named update", "rendered-a", "rendered-b", rollback, []string{
			`the update from "rendered-a" to "rendered-b" could not be rolled back`,
			"retries at 2025-01-02T15:04:05Z (attempt 3, backing off to 5m0s)",
			"mco daemon recover", "/run/machine-config-daemon-force", "journal.abandoned-",
			"Rollback error: rolling back /etc/x.conf: copying",
		}},
		{"unreadable journal", "", "", errors.New("corrupt journal"), []string{
			"an interrupted update (its journal is unreadable)", "Rollback error: corrupt journal",
		}},
		{"huge error", "a", "b", errors.New(strings.Repeat("e", 5000)), []string{
			"mco daemon recover", "/run/machine-config-daemon-force",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &stuckJournal{from: tc.from, to: tc.to, err: tc.err, attempts: 3, next: next}
			reason := truncate(s.reason())
			for _, want := range tc.want {
				if !strings.Contains(reason, want) {
					t.Errorf("reason %q\nlacks %q", reason, want)
				}
			}
			if len(reason) > protocol.MaxReasonLength {
				t.Errorf("reason is %d bytes", len(reason))
			}
		})
	}
}
