package bootguard

import (
	"fmt"
	"time"
)

// Check is one observed condition: OK, or what was seen instead.
type Check struct {
	OK       bool
	Evidence string
}

// Facts are what the guard observes on one pass.
type Facts struct {
	// Record is the armed guard (nil: none).
	Record *Record
	// Committed is the config currentconfig names.
	Committed string
	// RebootPending is the config /run's reboot-pending record names: set, the boot the record
	// was armed in has not ended yet.
	RebootPending string
	// FailedFor is the target of a recorded boot failure ("" none).
	FailedFor string
	// SinceBoot is how long ago this boot began.
	SinceBoot time.Duration
	Kubelet   Check
	Node      Check
}

// Guarding reports whether the record guards this boot, so the kubelet and the Node are worth
// observing: armed for the committed config, in the boot after the armed one, and not failed
// before. Otherwise Decide needs no observation.
func (f Facts) Guarding() bool {
	r := f.Record
	return r != nil && f.RebootPending != r.To && f.Committed == r.To && f.FailedFor != r.To
}

// Action is what the guard does next.
type Action int

const (
	// Nothing: no guard is armed for this boot; exit.
	Nothing Action = iota
	// Disarm: remove the record and exit (healthy, or the record no longer applies).
	Disarm
	// Wait: observe again.
	Wait
	// Revert: revert the update, record the failure, disarm, reboot into From.
	Revert
)

// Decision is an Action and why.
type Decision struct {
	Action Action
	Why    string
	// Failure is set for Revert: what to record.
	Failure *Failure
}

// Decide is the guard's "what now" over one pass's facts (Failure.At is left for the caller).
func Decide(f Facts) Decision {
	r := f.Record
	switch {
	case r == nil:
		return Decision{Action: Nothing, Why: "no boot guard is armed"}
	case f.RebootPending == r.To:
		// Started by hand in the boot it was armed in: the reboot it guards has not happened.
		return Decision{Action: Nothing, Why: fmt.Sprintf("the reboot into %s has not happened yet", r.To)}
	case f.Committed != r.To:
		// Armed before a transaction that rolled back (or a later update replaced it).
		return Decision{Action: Disarm, Why: fmt.Sprintf("the node is in %q, not %s: the guarded update did not commit", f.Committed, r.To)}
	case f.FailedFor == r.To:
		// Never revert the same target twice: a second failure is the agent's to report.
		return Decision{Action: Disarm, Why: fmt.Sprintf("a boot into %s already failed once; not reverting again", r.To)}
	case f.Kubelet.OK && f.Node.OK:
		return Decision{Action: Disarm, Why: fmt.Sprintf("the kubelet is healthy and Node %s Ready in %s", r.Node, r.To)}
	case f.SinceBoot < r.Timeout.Duration:
		return Decision{Action: Wait, Why: "waiting for the kubelet and the Node"}
	}
	failed := &Failure{From: r.From, To: r.To}
	if !f.Kubelet.OK {
		failed.Check = fmt.Sprintf("kubelet not healthy within %s after the reboot into %s", r.Timeout.Duration, r.To)
		failed.Evidence = f.Kubelet.Evidence
	} else {
		failed.Check = fmt.Sprintf("Node %s not Ready within %s after the reboot into %s", r.Node, r.Timeout.Duration, r.To)
		failed.Evidence = f.Node.Evidence
	}
	return Decision{Action: Revert, Why: failed.Check, Failure: failed}
}

// AgentVerdict is what the agent does with a recorded boot failure.
type AgentVerdict int

const (
	// Proceed: no failure concerns this target; update or settle as usual.
	Proceed AgentVerdict = iota
	// Clear: the failure no longer holds the node back (its target changed, or an admin asked
	// to retry it); remove the record and proceed.
	Clear
	// Hold: report the failure and do not try the target again.
	Hold
)

// ForAgent decides over a recorded failure (nil: none) for a node whose desiredConfig is
// desired: retryAt is the Node's retry-requested-at (zero: none), force the force file.
func ForAgent(f *Failure, desired string, retryAt time.Time, force bool) AgentVerdict {
	switch {
	case f == nil:
		return Proceed
	case f.To != desired, force, retryAt.After(f.At):
		return Clear
	}
	return Hold
}
