package drainpolicy

import (
	"encoding/json"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// Blocked is a node's blocked-drain bookkeeping: the blocked time of its earlier stints during
// this rollout (DrainBlockedForAnnotation, written when a stint ends) and when the current
// stint began (DrainBlockedSinceAnnotation; zero while no eviction is refused). Keeping the
// running stint as a start time, not a counter, costs one Node write when a drain becomes
// blocked and one when it stops being blocked, not one per eviction pass.
type Blocked struct {
	Before time.Duration
	Since  time.Time
}

// Read returns the node's bookkeeping; a value that does not parse counts as absent.
func Read(n *corev1.Node) Blocked {
	var b Blocked
	if s, err := strconv.ParseInt(n.Annotations[rolloutv1.DrainBlockedForAnnotation], 10, 64); err == nil && s > 0 {
		b.Before = time.Duration(s) * time.Second
	}
	if t, err := time.Parse(time.RFC3339, n.Annotations[protocol.DrainBlockedSinceAnnotation]); err == nil {
		b.Since = t
	}
	return b
}

// Now reports whether the drain is blocked now (a stint is running).
func (b Blocked) Now() bool { return !b.Since.IsZero() }

// Stint is how long the current stint has lasted at now; 0 when not blocked.
func (b Blocked) Stint(now time.Time) time.Duration {
	if b.Since.IsZero() || now.Before(b.Since) {
		return 0
	}
	return now.Sub(b.Since)
}

// Total is the blocked time in all at now: earlier stints and the current one.
func (b Blocked) Total(now time.Time) time.Duration { return b.Before + b.Stint(now) }

// Seconds is the value of DrainBlockedForAnnotation with the current stint folded in at now.
func (b Blocked) Seconds(now time.Time) string {
	return strconv.FormatInt(int64(b.Total(now).Round(time.Second)/time.Second), 10)
}

// Skipped returns the node's drain-skipped record, if it has a readable one.
func Skipped(n *corev1.Node) (rolloutv1.SkippedDrain, bool) {
	v, ok := n.Annotations[rolloutv1.DrainSkippedAnnotation]
	if !ok {
		return rolloutv1.SkippedDrain{}, false
	}
	var s rolloutv1.SkippedDrain
	if err := json.Unmarshal([]byte(v), &s); err != nil || s.Config == "" {
		return rolloutv1.SkippedDrain{}, false
	}
	return s, true
}

// SkippedFor reports whether the node's drain for target was skipped: it is tried again only
// after the pool's other nodes.
func SkippedFor(n *corev1.Node, target string) bool {
	s, ok := Skipped(n)
	return ok && target != "" && s.Config == target
}

// SkipRecord is the drain-skipped value for a skip of config at now.
func SkipRecord(config, blocking string, now time.Time) string {
	b, _ := json.Marshal(rolloutv1.SkippedDrain{Config: config, At: now.UTC().Format(time.RFC3339), Blocking: blocking})
	return string(b)
}

// HasNotes reports whether the node carries either bookkeeping annotation Stale may list; a
// node without them has nothing stale, whatever its target.
func HasNotes(n *corev1.Node) bool {
	_, hasSkip := n.Annotations[rolloutv1.DrainSkippedAnnotation]
	_, hasSeconds := n.Annotations[rolloutv1.DrainBlockedForAnnotation]
	return hasSkip || hasSeconds
}

// Stale lists the bookkeeping annotations to remove from a node of a pool whose target is
// target: all of them once the node is Done on the target (its drain is over for this
// rollout), and a skip of, with the blocked time counted for, a target the pool no longer has.
// A node whose drain runs keeps its running stint.
func Stale(n *corev1.Node, target string, doneOnTarget bool) []string {
	var keys []string
	_, hasSkip := n.Annotations[rolloutv1.DrainSkippedAnnotation]
	_, hasSeconds := n.Annotations[rolloutv1.DrainBlockedForAnnotation]
	switch {
	case doneOnTarget:
		if hasSkip {
			keys = append(keys, rolloutv1.DrainSkippedAnnotation)
		}
		if hasSeconds {
			keys = append(keys, rolloutv1.DrainBlockedForAnnotation)
		}
	case hasSkip && target != "" && !SkippedFor(n, target):
		keys = append(keys, rolloutv1.DrainSkippedAnnotation)
		if hasSeconds {
			keys = append(keys, rolloutv1.DrainBlockedForAnnotation)
		}
	}
	return keys
}
