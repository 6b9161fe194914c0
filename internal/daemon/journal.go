package daemon

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/protocol"
)

// journalRetryMax caps the backoff of retrying a stuck journal: what blocks a rollback (a
// full disk, a path someone replaced) is usually fixed by hand, and the node should not wait
// long after the fix.
const journalRetryMax = 5 * time.Minute

// stuckJournal is a transaction whose rollback failed. Until it is recovered or abandoned the
// agent changes nothing else on the node: every update would start from a root in neither
// config.
type stuckJournal struct {
	// from and to are the journal's configs; both empty when it cannot be read.
	from, to string
	err      error
	attempts int
	next     time.Time
	// announced is the failure an event was last sent for: the reason changes at every retry
	// (its time), the event only when the failure does.
	announced string
}

// failed records one more failed recovery and schedules the next: first, doubling, capped.
func (s *stuckJournal) failed(err error, now time.Time, first time.Duration) {
	s.err = err
	s.attempts++
	s.next = now.Add(retryAfter(s.attempts, first))
}

func retryAfter(attempts int, first time.Duration) time.Duration {
	d := first
	for i := 1; i < attempts && d < journalRetryMax; i++ {
		d *= 2
	}
	return min(d, journalRetryMax)
}

// reason is the Node's reason while the journal is stuck: what is left, when the agent tries
// again and what an admin can do come before the error, so truncation only shortens the error.
func (s *stuckJournal) reason() string {
	return fmt.Sprintf("%s could not be rolled back and is still journaled in %s; the agent retries at %s "+
		"(attempt %d, backing off to %s). To fix: repair what the error below names, then run "+
		"`mco daemon recover` on the node, or create %s to abandon the rollback (the journal is "+
		"kept in %s/journal.abandoned-*) and rewrite the desired config in full. Rollback error: %v",
		interruptedUpdate(s.from, s.to), apply.JournalPath, s.next.UTC().Format(time.RFC3339), s.attempts, journalRetryMax,
		ForceFilePath, apply.StateDir, s.err)
}

// journalAction is what the loop does about a journal before it syncs.
type journalAction int

const (
	// journalNone: nothing journaled, sync.
	journalNone journalAction = iota
	// journalRecover: try Recover now.
	journalRecover
	// journalAbandon: the admin created the force file; give up the rollback and rewrite.
	journalAbandon
	// journalWait: still stuck, retry at stuck.next.
	journalWait
)

// nextJournalAction decides from what is on disk and the backoff. A journal the agent did not
// know of (a rollback failed in this process) is recovered at once.
func nextJournalAction(stuck *stuckJournal, journaled, force bool, now time.Time) journalAction {
	switch {
	case !journaled:
		return journalNone
	case force:
		return journalAbandon
	case stuck == nil || !now.Before(stuck.next):
		return journalRecover
	}
	return journalWait
}

// abandonedJournalPath is where an abandoned journal and its backups are kept.
func abandonedJournalPath(now time.Time) string {
	return apply.StateDir + "/journal.abandoned-" + now.UTC().Format("20060102T150405Z")
}

// resolveJournal deals with a journal before anything reads the root: recovers it when due,
// abandons it for the force file, or reports it stuck. It returns when to try again while
// the journal is still in the way; zero means the loop may sync.
func (a *Agent) resolveJournal(ctx context.Context) (time.Time, error) {
	journaled, err := a.root.Exists(apply.JournalPath)
	if err != nil {
		return timeZero, err
	}
	force := false
	if journaled {
		if a.kube.node() == nil { // nothing to report on; the Node's arrival wakes the loop
			return timeZero, fmt.Errorf("node %s not found", a.opts.NodeName)
		}
		if force, err = a.root.Exists(ForceFilePath); err != nil {
			return timeZero, err
		}
	}
	switch nextJournalAction(a.s.stuck, journaled, force, time.Now()) {
	case journalNone:
		s := a.s.stuck
		if s == nil {
			return timeZero, nil
		}
		a.s.stuck = nil
		a.forgetCommitted()
		a.kube.event(corev1.EventTypeNormal, "JournalCleared",
			"The journal of the update from %q to %q is gone: it was recovered or abandoned outside the agent", s.from, s.to)
		return timeZero, a.unstuck(ctx)
	case journalAbandon:
		return timeZero, a.abandonJournal()
	case journalWait:
		return a.s.stuck.next, a.reportStuck(ctx)
	}
	rec, err := a.applier.Recover(ctx)
	a.forgetCommitted()
	if err == nil {
		wasStuck := a.s.stuck != nil
		a.s.stuck = nil
		a.reportRecovery(rec)
		if wasStuck {
			return timeZero, a.unstuck(ctx)
		}
		return timeZero, nil
	}
	a.noteStuck(err)
	return a.s.stuck.next, a.reportStuck(ctx)
}

// noteStuck records a failed recovery.
func (a *Agent) noteStuck(err error) {
	if a.s.stuck == nil {
		a.s.stuck = &stuckJournal{}
	}
	s := a.s.stuck
	s.failed(err, time.Now(), a.opts.JournalRetry)
	s.from, s.to, _, _ = a.applier.Journaled()
	a.opts.Log.Error("recovering an interrupted update failed; retrying", "node", a.opts.NodeName,
		"from", s.from, "to", s.to, "attempt", s.attempts, "at", s.next, "err", err)
}

// reportStuck shows the stuck journal on the Node: Degraded, with an event when the failure
// is new.
func (a *Agent) reportStuck(ctx context.Context) error {
	s := a.s.stuck
	if msg := s.err.Error(); msg != s.announced {
		s.announced = msg
		a.kube.event(corev1.EventTypeWarning, "JournalStuck", "%s", s.reason())
	}
	return a.report(ctx, protocol.NodeDegraded, s.reason(), nil)
}

// unstuck clears the stuck journal's reason: the root is in a config again, which the sync
// that follows verifies.
func (a *Agent) unstuck(ctx context.Context) error {
	if a.kube.node() == nil {
		return nil
	}
	return a.report(ctx, protocol.NodeWorking, "", nil)
}

// abandonJournal gives up a stuck rollback for the force file: the journal is kept for
// inspection and dropped, and the sync that follows sees the force file and rewrites the
// desired config in full.
func (a *Agent) abandonJournal() error {
	saveTo := abandonedJournalPath(time.Now())
	from, to, ok, err := a.applier.Abandon(saveTo)
	a.forgetCommitted()
	if err != nil {
		return degradedRetrying("JournalAbandonFailed", fmt.Errorf("abandoning the journal for %s: %w", ForceFilePath, err))
	}
	a.s.stuck = nil
	if ok {
		a.kube.event(corev1.EventTypeWarning, "JournalAbandoned",
			"%s is set: abandoned the update from %q to %q without rolling it back (journal and backups kept in %s); rewriting the desired config in full",
			ForceFilePath, from, to, saveTo)
		a.opts.Log.Warn("abandoned a journaled update for the force file", "node", a.opts.NodeName, "from", from, "to", to, "kept", saveTo)
	}
	return nil
}
