package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// DrainedForUpdate is what the agent moves on under when its target was superseded after its
// drain: mco's drain carried out (for any config) and the node still cordoned.
func TestDrainedForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"drained for its desired config", node("a", "old", desiring("new"), drainedFor("new")), true},
		{"drained for a superseded config", node("a", "old", desiring("newer"), drainedFor("new")), true},
		{"still draining", node("a", "old", desiring("new"), drainingFor("new")), false},
		{"uncordoned since", node("a", "old", desiring("new"), drainedFor("new"), func(n *corev1.Node) { n.Spec.Unschedulable = false }), false},
		{"cordoned by an admin", node("a", "old", cordoned), false},
		{"uncordon acknowledged, cordoned by an admin", node("a", "old", cordoned, func(n *corev1.Node) {
			n.Annotations[protocol.DesiredDrainAnnotation] = protocol.UncordonRequest("old")
			n.Annotations[protocol.LastAppliedDrainAnnotation] = protocol.UncordonRequest("old")
		}), false},
	} {
		if got := DrainedForUpdate(tc.node); got != tc.want {
			t.Errorf("%s: DrainedForUpdate = %v, want %v", tc.name, got, tc.want)
		}
	}
}
