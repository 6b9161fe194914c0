package explain

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollout"
)

// held explains a node an admin holds back that is behind its pool's target: nothing moves it
// until the hold is released.
func (e nodeExplainer) held(x *Explanation, current, target, in string) {
	x.Summary = fmt.Sprintf("held: runs %s, %s targets %s", current, in, target)
	x.Doing = fmt.Sprintf("nothing: the node is held (%s=true), so the node controller never gives it %s", rolloutv1.HoldAnnotation, target)
	x.Why = append(x.Why, fmt.Sprintf("an admin held the node back (`mco hold %s`); %s is neither Updated nor Degraded for it, and reports it in its NodesHeld condition", e.n.Name, in))
	x.Next = fmt.Sprintf("nothing until the hold is released; then the node is updated to %s with the rest of %s (maxUnavailable, pacing, its update priority)", target, in)
	x.YouCan = append(x.YouCan, releaseAdvice(e.n))
}

// heldAside is what a hold means for a node that is not waiting on it: updating (its update
// finishes) or on its pool's target.
func (e nodeExplainer) heldAside(x *Explanation) {
	if rollout.Updating(e.n) && !rollout.Degraded(e.n) {
		x.Why = append(x.Why, "the node is held (`mco hold`): the update in progress finishes, and no further update starts on it")
	} else {
		x.Why = append(x.Why, "the node is held (`mco hold`): no update starts on it, now or for the pool's next target")
	}
	x.YouCan = append(x.YouCan, releaseAdvice(e.n))
}

func releaseAdvice(n *corev1.Node) string {
	return fmt.Sprintf("release it: `mco hold --undo %s` (or `kubectl annotate node %s %s-`)", n.Name, n.Name, rolloutv1.HoldAnnotation)
}
