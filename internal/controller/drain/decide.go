package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/mco-dev/mco/internal/drainpolicy"
)

// Verb is what a desiredDrain request asks for.
type Verb string

const (
	VerbDrain    Verb = "drain"
	VerbUncordon Verb = "uncordon"
)

// ParseRequest splits a desiredDrain value ("drain-<config>" or "uncordon-<config>"): the verb is
// the text before the first '-'.
func ParseRequest(value string) (Verb, error) {
	verb, _, ok := strings.Cut(value, "-")
	switch v := Verb(verb); {
	case ok && (v == VerbDrain || v == VerbUncordon):
		return v, nil
	default:
		return "", fmt.Errorf("desiredDrain %q is neither drain-<config> nor uncordon-<config>", value)
	}
}

// Backoff is how long to wait before the next eviction pass of a drain that started age ago:
// a quarter of its age, between 1 s and 1 min, so quick drains finish quickly and stuck ones
// cost one pass a minute. It never sleeps past the blocked threshold, so the report is on time.
func Backoff(age, threshold time.Duration) time.Duration {
	d := min(max(age/4, time.Second), time.Minute)
	if untilThreshold := threshold - age; untilThreshold > 0 {
		d = min(d, untilThreshold)
	}
	return d
}

// Obstacle is one pod still on a draining node and why.
type Obstacle struct {
	Pod string // namespace/name
	// Budgets are the PodDisruptionBudgets that refused the eviction (namespace/name); empty when
	// the pod is merely still terminating.
	Budgets []string
	// Detail is the API server's reason, when it gave one.
	Detail string
	// Refused is true when the API server refused the eviction (a PodDisruptionBudget): the
	// drain is blocked, not merely waiting for a pod to terminate.
	Refused bool
	// uid is the refused pod's, so a deletion (spec.drain.deleteBlockingPodsAfter) can only
	// delete that pod, not one of the same name created since.
	uid types.UID
}

func (o Obstacle) String() string {
	if len(o.Budgets) == 0 {
		if o.Detail != "" {
			return fmt.Sprintf("pod %s: %s", o.Pod, o.Detail)
		}
		return fmt.Sprintf("pod %s is still terminating", o.Pod)
	}
	s := fmt.Sprintf("pod %s cannot be evicted: PodDisruptionBudget %s", o.Pod, strings.Join(o.Budgets, ", "))
	if o.Detail != "" {
		s += " (" + o.Detail + ")"
	}
	return s
}

// maxObstacles bounds the report: it lives in a Node annotation and a pool condition.
const maxObstacles = 5

// BlockedMessage describes what keeps a drain from finishing, budget refusals first, in a stable
// order so an unchanged situation never rewrites the annotation.
func BlockedMessage(obstacles []Obstacle) string {
	sorted := slices.Clone(obstacles)
	slices.SortFunc(sorted, func(a, b Obstacle) int {
		if (len(a.Budgets) == 0) != (len(b.Budgets) == 0) {
			if len(a.Budgets) > 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Pod, b.Pod)
	})
	var parts []string
	for _, o := range sorted[:min(len(sorted), maxObstacles)] {
		parts = append(parts, o.String())
	}
	if extra := len(sorted) - maxObstacles; extra > 0 {
		parts = append(parts, fmt.Sprintf("and %d more pods", extra))
	}
	return strings.Join(parts, "; ")
}

// Refused reports whether any obstacle is a refused eviction.
func Refused(obstacles []Obstacle) bool {
	return slices.ContainsFunc(obstacles, func(o Obstacle) bool { return o.Refused })
}

// BlockedRequeue is how long to wait before the next eviction pass: the backoff, but never past
// the next step of the pool's drain policy (due at next, 0 for none), so it is taken on time.
func BlockedRequeue(backoff, next time.Duration) time.Duration {
	if next > 0 {
		return min(backoff, next)
	}
	return backoff
}

// ReportThreshold is how long a drain runs before it is reported blocked: the controller's
// threshold, or a pool's spec.drain.blockedTimeout when that is shorter, so a node skipped or
// whose pods are deleted for a blocked drain was reported blocked first, naming what blocked it.
func ReportThreshold(threshold time.Duration, p drainpolicy.Policy) time.Duration {
	if p.Set && p.BlockedTimeout > 0 {
		return min(threshold, p.BlockedTimeout)
	}
	return threshold
}
