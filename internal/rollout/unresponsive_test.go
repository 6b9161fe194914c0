package rollout

import (
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// notReadyFor makes the node NotReady since d before now.
func notReadyFor(now time.Time, d time.Duration) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Status.Conditions[0].Status = corev1.ConditionFalse
		n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d))
	}
}

func rebooting(n *corev1.Node) {
	n.Annotations[protocol.PostConfigActionAnnotation] = protocol.PostConfigActionRebooting
}

func TestUnresponsiveNodesHaltThePool(t *testing.T) {
	now := time.Unix(100000, 0)
	three := maxUnavail(intstr.FromInt32(3))
	for _, tc := range []struct {
		name      string
		threshold time.Duration
		nodes     []*corev1.Node
		wantLost  []string
		wantNext  []string
		recheck   time.Duration
	}{
		{
			name: "a node NotReady past the threshold while updating halts the pool",
			nodes: []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeWorking, ""), rebooting, notReadyFor(now, 16*time.Minute)),
				node("b", "old"), node("c", "old")},
			wantLost: []string{"a"},
		},
		{
			name: "below the threshold it only holds its slot, and the pool is rechecked when it would cross",
			nodes: []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeWorking, ""), notReadyFor(now, 5*time.Minute)),
				node("b", "old"), node("c", "old")},
			wantNext: []string{"b", "c"},
			recheck:  10 * time.Minute,
		},
		{
			name:      "the threshold is configurable",
			threshold: time.Minute,
			nodes: []*corev1.Node{node("a", "old", desiring("new"), notReadyFor(now, 2*time.Minute)),
				node("b", "old")},
			wantLost: []string{"a"},
		},
		{
			name:      "a node Done in its config and NotReady is not mco's doing",
			threshold: time.Minute,
			nodes:     []*corev1.Node{node("a", "old", notReadyFor(now, time.Hour)), node("b", "old"), node("c", "old")},
			wantNext:  []string{"b", "c"},
		},
		{
			name:      "a queued reboot counts as updating even once the agent reported Done",
			threshold: time.Minute,
			nodes:     []*corev1.Node{node("a", "new", rebooting, notReadyFor(now, time.Hour)), node("b", "old")},
			wantLost:  []string{"a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new", three), Nodes: tc.nodes, Now: metav1.NewTime(now), NotReadyThreshold: tc.threshold})
			var lost []string
			for _, u := range d.Unresponsive {
				lost = append(lost, u.Node)
			}
			if !slices.Equal(lost, tc.wantLost) {
				t.Errorf("unresponsive = %v, want %v", lost, tc.wantLost)
			}
			if !slices.Equal(d.Next, tc.wantNext) {
				t.Errorf("Next = %v, want %v", d.Next, tc.wantNext)
			}
			if d.RecheckAfter != tc.recheck {
				t.Errorf("RecheckAfter = %s, want %s", d.RecheckAfter, tc.recheck)
			}
			c := poolcondition.Get(&d.Status, poolcondition.NodeUnresponsive)
			if c == nil {
				t.Fatal("no NodeUnresponsive condition")
			}
			if (c.Status == corev1.ConditionTrue) != (len(tc.wantLost) > 0) {
				t.Fatalf("NodeUnresponsive = %s %q", c.Status, c.Message)
			}
			if len(tc.wantLost) == 0 {
				return
			}
			for _, want := range []string{"Node " + tc.wantLost[0], "while updating to new", "no further nodes of this pool are started"} {
				if !strings.Contains(c.Message, want) {
					t.Errorf("NodeUnresponsive message %q lacks %q", c.Message, want)
				}
			}
			if !poolcondition.IsTrue(&d.Status, mcfgv1.MachineConfigPoolDegraded) {
				t.Error("an unresponsive node must degrade the pool")
			}
		})
	}
}
