package drainpolicy

import (
	"fmt"
	"time"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Action is what happens to a blocked drain.
type Action string

const (
	// Wait keeps waiting: the DrainBlocked condition and alert, as without a policy.
	Wait Action = "wait"
	// Skip returns the node to its current config and uncordons it; it is tried again after
	// the pool's other nodes.
	Skip Action = "skip"
	// DeletePods deletes the pods whose eviction is refused.
	DeletePods Action = "delete pods"
)

// Field names for the step a policy field brings.
const (
	fieldBlockedTimeout = "spec.drain.blockedTimeout"
	fieldOnBlocked      = "spec.drain.onBlocked"
	fieldDeleteAfter    = "spec.drain.deleteBlockingPodsAfter"
)

// Step is where a blocked drain stands: what to do now, and the next step and when it comes.
type Step struct {
	// Now is what happens at the decision's time: Wait, or Skip or DeletePods when due.
	Now Action
	// Next is the step that follows a Wait, with its time At and the policy Field that brings
	// it; "" when nothing will (waiting until the drain finishes or an admin acts).
	Next  Action
	At    time.Time
	Field string
	// Why says, when Skip is not coming although onBlocked is Skip, why not.
	Why string
}

// RequeueAfter is how long after now the next step is due; 0 when none is coming.
func (s Step) RequeueAfter(now time.Time) time.Duration {
	if s.Next == "" {
		return 0
	}
	return max(s.At.Sub(now), time.Second)
}

// Decide is the step of a blocked drain at now. A skip counts the current stint (a drain
// blocked that long without a break) and is only worth it while another node of the pool waits
// for a slot (othersWaiting): skipping the last node would only drain it again at once. A
// deletion counts the blocked time in all, over every attempt, so with Skip it acts on a later
// attempt; when both are due the deletion comes first, since a skip would only postpone it.
func Decide(p Policy, b Blocked, now time.Time, othersWaiting bool) Step {
	if !b.Now() {
		return Step{Now: Wait}
	}
	deleteDue := p.DeleteAfter > 0 && b.Total(now) >= p.DeleteAfter
	if deleteDue {
		return Step{Now: DeletePods, Field: fieldDeleteAfter}
	}
	st := Step{Now: Wait}
	skipAt := b.Since.Add(p.BlockedTimeout)
	switch {
	case p.OnBlocked == rolloutv1.DrainSkip && othersWaiting:
		if !now.Before(skipAt) {
			return Step{Now: Skip, Field: fieldBlockedTimeout}
		}
		st.Next, st.At, st.Field = Skip, skipAt, fieldBlockedTimeout
	case p.OnBlocked == rolloutv1.DrainSkip:
		st.Why = "no other node of the pool waits, so skipping would gain nothing"
	}
	if p.DeleteAfter > 0 {
		deleteAt := now.Add(p.DeleteAfter - b.Total(now))
		if st.Next == "" || deleteAt.Before(st.At) {
			st.Next, st.At, st.Field = DeletePods, deleteAt, fieldDeleteAfter
		}
	}
	if st.Next == "" && st.Why == "" {
		st.Field = fieldOnBlocked
	}
	return st
}

// Describe says the step in words for mco explain, status and plan: how long the drain has been
// blocked, and what comes next, when, naming the policy field.
func Describe(p Policy, b Blocked, st Step, now time.Time) string {
	blocked := fmt.Sprintf("drain blocked for %s", human(b.Stint(now)))
	if b.Before > 0 {
		blocked += fmt.Sprintf(" (%s in all this rollout)", human(b.Total(now)))
	}
	switch {
	case st.Now == Skip:
		return blocked + fmt.Sprintf("; skipping the node now (%s %s)", fieldBlockedTimeout, human(p.BlockedTimeout))
	case st.Now == DeletePods:
		return blocked + fmt.Sprintf("; deleting the pods whose eviction is refused now (%s %s)", fieldDeleteAfter, human(p.DeleteAfter))
	case st.Next == Skip:
		return blocked + fmt.Sprintf("; waiting, skip at %s (in %s; %s %s)", st.At.UTC().Format(time.RFC3339), human(st.At.Sub(now)), fieldBlockedTimeout, human(p.BlockedTimeout))
	case st.Next == DeletePods:
		s := blocked + fmt.Sprintf("; waiting, delete the blocking pods at %s (in %s; %s %s)", st.At.UTC().Format(time.RFC3339), human(st.At.Sub(now)), fieldDeleteAfter, human(p.DeleteAfter))
		if st.Why != "" {
			s += "; not skipped: " + st.Why
		}
		return s
	case st.Why != "":
		return blocked + "; waiting, not skipped: " + st.Why + " (no spec.drain.deleteBlockingPodsAfter)"
	case !p.Set:
		return blocked + "; waiting (no spec.drain in a MachineConfigPoolRollout: a blocked drain waits for an admin)"
	}
	return blocked + fmt.Sprintf("; waiting (%s %s)", fieldOnBlocked, p.OnBlocked)
}

// DescribeSkipped says where a skipped node stands.
func DescribeSkipped(s rolloutv1.SkippedDrain) string {
	msg := fmt.Sprintf("drain for %s skipped at %s (spec.drain.onBlocked Skip); tried again after the pool's other nodes", s.Config, s.At)
	if s.Blocking != "" {
		msg += "; it was blocked by: " + s.Blocking
	}
	return msg
}

// human is a duration to the second ("20s", "9m40s"): the steps of short policies matter to
// the second.
func human(d time.Duration) string {
	return max(d, 0).Round(time.Second).String()
}
