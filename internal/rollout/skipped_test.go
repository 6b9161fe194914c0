package rollout

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
)

func skippedFrom(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Annotations[rolloutv1.DrainSkippedAnnotation] = drainpolicy.SkipRecord(cfg, "pod ns/p cannot be evicted", time.Unix(2000, 0))
	}
}

// A node whose drain for the target was skipped is chosen only after every other candidate, by
// the usual order among the skipped; a skip of another target does not count.
func TestDecideSkippedLast(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int32
		budget *int
		nodes  []*corev1.Node
		want   []string
	}{
		{"others first", 1, nil, []*corev1.Node{node("a", "old", skippedFrom("new")), node("b", "old", created(2000)), node("c", "old", created(3000))}, []string{"b"}},
		{"after the others, in a free slot", 3, nil, []*corev1.Node{node("a", "old", skippedFrom("new")), node("b", "old", created(2000))}, []string{"b", "a"}},
		{"alone: tried again", 1, nil, []*corev1.Node{node("a", "old", skippedFrom("new")), node("b", "new", created(2000))}, []string{"a"}},
		{"a skip of an older target does not count", 1, nil, []*corev1.Node{node("a", "old", skippedFrom("older")), node("b", "old", created(2000))}, []string{"a"}},
		{"within the pacing budget", 3, ptrTo(1), []*corev1.Node{node("a", "old", skippedFrom("new")), node("b", "old", created(2000))}, []string{"b"}},
		{"skipped ones in the usual order", 2, nil, []*corev1.Node{node("z", "old", skippedFrom("new")), node("a", "old", skippedFrom("new"), created(2000)), node("m", "old", skippedFrom("new"))}, []string{"m", "z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new", maxUnavail(intstr.FromInt32(tc.limit))), Nodes: tc.nodes, StartBudget: tc.budget})
			if !slices.Equal(d.Next, tc.want) {
				t.Errorf("next %v, want %v", d.Next, tc.want)
			}
		})
	}
}

func TestOthersWaitingAndDrainingFor(t *testing.T) {
	self := node("a", "old", desiring("new"), drainingFor("new"))
	held := func(n *corev1.Node) { n.Annotations[rolloutv1.HoldAnnotation] = "true" }
	for _, tc := range []struct {
		name  string
		other *corev1.Node
		want  bool
	}{
		{"a Ready node on the old config waits", node("b", "old"), true},
		{"a node on the target does not", node("b", "new"), false},
		{"a node updating to the target does not", node("b", "old", desiring("new"), cordoned), false},
		{"a held node does not", node("b", "old", held), false},
		{"a skipped node does not", node("b", "old", skippedFrom("new")), false},
		{"a NotReady node does not", node("b", "old", notReady), false},
	} {
		if got := OthersWaiting([]*corev1.Node{self, tc.other}, "a", "new"); got != tc.want {
			t.Errorf("%s: OthersWaiting = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !DrainingFor(self, "new") {
		t.Error("a node draining for the target is not DrainingFor it")
	}
	for _, n := range []*corev1.Node{
		node("b", "old", desiring("new"), drainedFor("new")),
		node("b", "old", desiring("new")),
		node("b", "old", desiring("newer"), drainingFor("newer")),
	} {
		if DrainingFor(n, "new") {
			t.Errorf("%s (%v) counts as draining for new", n.Name, n.Annotations)
		}
	}
}
