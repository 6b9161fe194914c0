package rollout

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/drainpolicy"
)

// skippedLast returns the k candidates to start: as firstCandidates orders them, except that a
// node whose drain for target was skipped (spec.drain.onBlocked: Skip) comes after every other
// candidate, so it is tried again only once the rest of the pool has had its turn.
func skippedLast(candidates []*corev1.Node, target string, k int) []*corev1.Node {
	if k <= 0 {
		return nil
	}
	var skipped []*corev1.Node
	rest := slices.DeleteFunc(slices.Clone(candidates), func(n *corev1.Node) bool {
		if drainpolicy.SkippedFor(n, target) {
			skipped = append(skipped, n)
			return true
		}
		return false
	})
	chosen := firstCandidates(rest, min(k, len(rest)))
	if left := k - len(chosen); left > 0 {
		chosen = append(slices.Clip(chosen), firstCandidates(skipped, min(left, len(skipped)))...)
	}
	return chosen
}
