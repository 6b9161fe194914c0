package rollout

import (
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// drainAsked: the agent asked for the drain for cfg; the drain controller has not answered.
func drainAsked(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[protocol.DesiredDrainAnnotation] = protocol.DrainRequest(cfg) }
}

// uncordonAsked: the agent wrote cfg and asks for the uncordon.
func uncordonAsked(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[protocol.DesiredDrainAnnotation] = protocol.UncordonRequest(cfg) }
}

// uncordonedAfter: the node's last update, to cfg, ended with its uncordon.
func uncordonedAfter(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Annotations[protocol.DesiredDrainAnnotation] = protocol.UncordonRequest(cfg)
		n.Annotations[protocol.LastAppliedDrainAnnotation] = protocol.UncordonRequest(cfg)
	}
}

func rebootQueued(n *corev1.Node) {
	n.Annotations[protocol.PostConfigActionAnnotation] = protocol.PostConfigActionRebooting
}

// working: the agent took up its desired config (state Working) and has not asked for anything.
func working(n *corev1.Node) { n.Annotations[protocol.StateAnnotation] = string(protocol.NodeWorking) }

// A node pointed at a target the pool replaced before its agent asked for a drain is given the
// new target without using capacity; once its agent asked for the drain (or wrote, or queued
// its reboot) it finishes first, as any updating node.
func TestDecideSuperseded(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pool           *mcfgv1.MachineConfigPool
		nodes          []*corev1.Node
		want           []string
		wantSuperseded []string
	}{
		{
			name:           "planning for the superseded target: moved, and nothing else starts beside it",
			pool:           pool("worker", "full"),
			nodes:          []*corev1.Node{node("a", "old", desiring("partial"), working, uncordonedAfter("old")), node("b", "old")},
			want:           []string{"a"},
			wantSuperseded: []string{"a"},
		},
		{
			name:           "not yet picked up by its agent: moved",
			pool:           pool("worker", "full"),
			nodes:          []*corev1.Node{node("a", "old", desiring("partial")), node("b", "old")},
			want:           []string{"a"},
			wantSuperseded: []string{"a"},
		},
		{
			name:           "moving it costs no capacity: a second slot starts a healthy node",
			pool:           pool("worker", "full", maxUnavail(intstr.FromInt32(2))),
			nodes:          []*corev1.Node{node("a", "old", desiring("partial"), working), node("b", "old"), node("c", "old")},
			want:           []string{"a", "b"},
			wantSuperseded: []string{"a"},
		},
		{
			name:  "its drain asked for: it finishes the superseded update first",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, drainAsked("partial")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "its drain asked for, not cordoned yet, and capacity left: not a candidate, it finishes first",
			pool:  pool("worker", "full", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, drainAsked("partial")), node("b", "old")},
			want:  []string{"b"},
		},
		{
			name:  "drained: it finishes first",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, drainedFor("partial")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "moving on under an earlier drain still in effect: it finishes first",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, drainedFor("older")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "written, asking for its uncordon: it finishes first",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, uncordonAsked("partial")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "reboot queued: it finishes first",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working, rebootQueued), node("b", "old")},
			want:  nil,
		},
		{
			name:  "done on the superseded target: a candidate like any other, within capacity",
			pool:  pool("worker", "full"),
			nodes: []*corev1.Node{node("a", "partial"), node("b", "old", desiring("partial"), working, drainedFor("partial"))},
			want:  nil,
		},
		{
			name:           "a NotReady node its agent never reached is moved too",
			pool:           pool("worker", "full"),
			nodes:          []*corev1.Node{node("a", "old", desiring("partial"), notReady), node("b", "old")},
			want:           []string{"a"},
			wantSuperseded: []string{"a"},
		},
		{
			name: "a node that moved on under an earlier drain and failed is retargeted like any failed node mco cordoned",
			pool: pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("older"))},
			want: []string{"a"},
		},
		{
			name:  "paused: nothing moves",
			pool:  pool("worker", "full", paused),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), working)},
			want:  nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: tc.pool, Nodes: tc.nodes})
			if !slices.Equal(d.Next, tc.want) || !slices.Equal(d.Superseded, tc.wantSuperseded) {
				t.Errorf("Next = %v, Superseded = %v; want %v and %v", d.Next, d.Superseded, tc.want, tc.wantSuperseded)
			}
			limit, _ := MaxUnavailable(tc.pool, len(tc.nodes))
			if int(d.Status.UnavailableMachineCount) > limit {
				t.Errorf("%d nodes unavailable after the decision, maxUnavailable %d", d.Status.UnavailableMachineCount, limit)
			}
		})
	}
}

// A pacing budget counts a moved node as a start: it begins an update to the new target.
func TestDecideSupersededWithinBudget(t *testing.T) {
	three := maxUnavail(intstr.FromInt32(3))
	nodes := func() []*corev1.Node {
		return []*corev1.Node{node("a", "old", desiring("partial"), working), node("b", "old", desiring("partial")), node("c", "old")}
	}
	for _, tc := range []struct {
		name        string
		budget      *int
		want        []string
		wantStarted int
	}{
		{"no budget", nil, []string{"a", "b", "c"}, 3},
		{"a canary of one moves one", ptrTo(1), []string{"a"}, 1},
		{"a budget of two moves both", ptrTo(2), []string{"a", "b"}, 2},
		{"a soak moves none", ptrTo(0), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "full", three), Nodes: nodes(), StartBudget: tc.budget})
			if !slices.Equal(d.Next, tc.want) || d.Started != tc.wantStarted {
				t.Errorf("Next %v started %d, want %v and %d", d.Next, d.Started, tc.want, tc.wantStarted)
			}
		})
	}
}

// Targets replaced while the rollout runs never push more nodes than allowed out of service,
// and the rollout ends on the last target. The agent is simulated one step per round: asked to
// move, it plans (Working), then asks for its drain, then writes and reports Done.
func TestSupersedingNeverExceedsLimit(t *testing.T) {
	for _, mu := range []intstr.IntOrString{intstr.FromInt32(1), intstr.FromInt32(3), intstr.FromString("30%")} {
		t.Run(mu.String(), func(t *testing.T) {
			targets := []string{"t1", "t2", "t3", "t4"}
			p := pool("worker", targets[0], maxUnavail(mu))
			nodes := tenNodes("old")
			limit, _ := MaxUnavailable(p, len(nodes))
			for round := 0; round < 200; round++ {
				if round%3 == 1 && round/3 < len(targets)-1 {
					p.Spec.Configuration.Name = targets[round/3+1] // a new render every few rounds
				}
				d := Decide(Input{Pool: p, Nodes: nodes})
				for _, n := range nodes {
					if slices.Contains(d.Next, n.Name) {
						n.Annotations[protocol.DesiredConfigAnnotation] = p.Spec.Configuration.Name
					}
				}
				if d.Status.UnavailableMachineCount > int32(limit) {
					t.Fatalf("round %d: %d unavailable, limit %d", round, d.Status.UnavailableMachineCount, limit)
				}
				if d.Completed && p.Spec.Configuration.Name == targets[len(targets)-1] {
					return
				}
				for _, n := range nodes {
					a := n.Annotations
					want := a[protocol.DesiredConfigAnnotation]
					switch {
					case a[protocol.CurrentConfigAnnotation] == want:
					case a[protocol.DesiredDrainAnnotation] == protocol.DrainRequest(want):
						a[protocol.CurrentConfigAnnotation] = want
						a[protocol.DesiredDrainAnnotation] = protocol.UncordonRequest(want)
						a[protocol.StateAnnotation] = string(protocol.NodeDone)
					case a[protocol.StateAnnotation] == string(protocol.NodeWorking):
						a[protocol.DesiredDrainAnnotation] = protocol.DrainRequest(want)
					default:
						a[protocol.StateAnnotation] = string(protocol.NodeWorking)
					}
				}
			}
			t.Fatal("rollout did not complete in 200 rounds")
		})
	}
}
