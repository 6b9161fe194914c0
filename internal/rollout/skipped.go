package rollout

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
)

// skippedLast returns the k candidates to start: as firstCandidates orders them, except that a
// node whose drain for target was skipped (spec.drain.onBlocked: Skip) comes after every other
// candidate, so it is tried again only once the rest of the pool has had its turn.
func skippedLast(candidates []*corev1.Node, target string, k int) []*corev1.Node {
	if k <= 0 {
		return nil
	}
	isSkipped := func(n *corev1.Node) bool { return drainpolicy.SkippedFor(n, target) }
	if !slices.ContainsFunc(candidates, isSkipped) {
		return firstCandidates(candidates, k) // the usual case, without a copy of thousands
	}
	var skipped []*corev1.Node
	rest := slices.DeleteFunc(slices.Clone(candidates), func(n *corev1.Node) bool {
		if isSkipped(n) {
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

// OthersWaiting reports whether a node of the pool other than self waits for its turn to move
// to target: Ready, not on it, not held, not itself skipped. Only then is skipping self worth
// it (spec.drain.onBlocked: Skip): the slot it frees goes to one of them.
func OthersWaiting(nodes []*corev1.Node, self, target string) bool {
	return slices.ContainsFunc(nodes, func(n *corev1.Node) bool {
		return n.Name != self && desired(n) != target && Ready(n) &&
			n.Annotations[rolloutv1.HoldAnnotation] != "true" && !drainpolicy.SkippedFor(n, target)
	})
}

// DrainingFor reports whether the node's drain for its move to target runs: asked for by its
// agent and not acknowledged yet. Only such a drain can be skipped.
func DrainingFor(n *corev1.Node, target string) bool {
	want := protocol.DrainRequest(target)
	return target != "" && desired(n) == target && current(n) != target && current(n) != "" &&
		n.Annotations[protocol.DesiredDrainAnnotation] == want && n.Annotations[protocol.LastAppliedDrainAnnotation] != want
}
