package node

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// The nodes a decision targets are written first, in the decision's order, before the taints
// of the nodes left waiting; nodes whose fields already match are not written.
func TestNodeWritesTargetFirst(t *testing.T) {
	node := func(name, desired string, tainted bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{protocol.DesiredConfigAnnotation: desired}}}
		if tainted {
			n.Spec.Taints = []corev1.Taint{updateTaint}
		}
		return n
	}
	cases := []struct {
		name               string
		members, unmanaged []*corev1.Node
		d                  rollout.Decision
		// noDrain names the nodes whose move to the target drains nothing.
		noDrain []string
		want    []string
	}{{
		name:    "new target: the batch, then the taints of the waiting nodes",
		members: []*corev1.Node{node("a", "v1", false), node("b", "v1", false), node("c", "v1", false), node("d", "v1", false)},
		d:       rollout.Decision{Target: "v2", Next: []string{"d", "b"}},
		want:    []string{"d desired=v2", "b desired=v2", "a taint", "c taint"},
	}, {
		name:    "next batch: tainted nodes lose the taint with their target; others as they are",
		members: []*corev1.Node{node("a", "v1", true), node("b", "v2", false), node("c", "v1", true)},
		d:       rollout.Decision{Target: "v2", Next: []string{"c"}},
		want:    []string{"c desired=v2"},
	}, {
		name:      "an adopted node is written with the batch; other unmanaged nodes are not",
		members:   []*corev1.Node{node("a", "v1", false)},
		unmanaged: []*corev1.Node{node("new", "", false), node("waiting", "", false)},
		d:         rollout.Decision{Target: "v2", Next: []string{"new"}, Adopted: []string{"new"}},
		want:      []string{"new desired=v2", "a taint"},
	}, {
		name:    "a move that drains no node taints none, and a taint from an earlier target goes",
		members: []*corev1.Node{node("a", "v1", true), node("b", "v1", false), node("c", "v1", false)},
		d:       rollout.Decision{Target: "v2", Next: []string{"b"}},
		noDrain: []string{"a", "b", "c"},
		want:    []string{"b desired=v2", "a untaint"},
	}, {
		name:    "only the nodes whose move may drain are tainted",
		members: []*corev1.Node{node("a", "v1", false), node("b", "v1", false), node("c", "v1", false)},
		d:       rollout.Decision{Target: "v2", Next: []string{"a"}},
		noDrain: []string{"b"},
		want:    []string{"a desired=v2", "c taint"},
	}, {
		name:    "no target: nothing is tainted or written",
		members: []*corev1.Node{node("a", "v1", false)},
		d:       rollout.Decision{},
		want:    nil,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mayDrain := func(n *corev1.Node) bool { return !slices.Contains(tc.noDrain, n.Name) }
			todo, wants := nodeWrites(tc.members, tc.unmanaged, tc.d, mayDrain)
			var got []string
			for i, n := range todo {
				switch {
				case wants[i].desired != ownedOf(n).desired:
					got = append(got, fmt.Sprintf("%s desired=%s", n.Name, wants[i].desired))
				case wants[i].tainted:
					got = append(got, n.Name+" taint")
				default:
					got = append(got, n.Name+" untaint")
				}
				if wants[i].tainted != (rollout.WantsTaint(wants[i].desired, tc.d.Target) && mayDrain(n)) {
					t.Errorf("%s: tainted=%v with desired %q and target %q", n.Name, wants[i].tainted, wants[i].desired, tc.d.Target)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("writes %q, want %q", got, tc.want)
			}
		})
	}
}
