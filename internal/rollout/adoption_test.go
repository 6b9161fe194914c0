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

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// stranger builds a Ready node mco did not boot: no currentConfig, desiredConfig or state.
func stranger(name string, opts ...func(*corev1.Node)) *corev1.Node {
	return node(name, "", append([]func(*corev1.Node){unmanaged, noState}, opts...)...)
}

func offered(target string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[protocol.AdoptionTargetAnnotation] = target }
}

// pendingFor: the agent compared the host with target and waits: adopting writes /etc/chrony.conf
// and reboots.
func pendingFor(target string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Annotations[protocol.AdoptionTargetAnnotation] = target
		n.Annotations[protocol.AdoptionAnnotation] = protocol.AdoptionPending
		s, err := adoption.Encode(adoption.Plan{Target: target, Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent}},
			Actions: "Reboot", Drain: true, Reboot: true})
		if err != nil {
			panic(err)
		}
		n.Annotations[protocol.AdoptionPlanAnnotation] = s
	}
}

func refusedFor(target string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		pendingFor(target)(n)
		s, _ := adoption.Encode(adoption.Plan{Target: target, Refused: []string{"osImageURL: this host cannot switch OS images"}, Actions: "Reboot"})
		n.Annotations[protocol.AdoptionPlanAnnotation] = s
	}
}

func approved(n *corev1.Node) { n.Annotations[protocol.AdoptAnnotation] = protocol.AdoptApproved }

func poolApproved(p *mcfgv1.MachineConfigPool) {
	p.Annotations = map[string]string{protocol.AdoptAnnotation: protocol.AdoptApproved}
}

func TestManaged(t *testing.T) {
	for name, c := range map[string]struct {
		n    *corev1.Node
		want bool
	}{
		"agent reported":                 {node("a", "r1"), true},
		"being adopted: desired only":    {stranger("a", desiring("r1")), true},
		"current only":                   {node("a", "r1", desiring("")), true},
		"neither: joining or a stranger": {stranger("a"), false},
	} {
		if got := Managed(c.n); got != c.want {
			t.Errorf("%s: Managed = %v, want %v", name, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	worker := pool("worker", "r1")
	nodes := []*corev1.Node{node("m", "r1"), stranger("s"), stranger("adopting", desiring("r1")),
		stranger("infra", label("node-role.kubernetes.io/infra", ""))}
	members, unmanaged, _ := Split(worker, []*mcfgv1.MachineConfigPool{worker, pool("infra", "")}, nodes)
	if !slices.Equal(names(members), []string{"m", "adopting"}) || !slices.Equal(names(unmanaged), []string{"s"}) {
		t.Errorf("members %v unmanaged %v; want [m adopting] and [s]", names(members), names(unmanaged))
	}
}

func TestAdoptionOffers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		target    string
		nodes     []*corev1.Node
		unmanaged []*corev1.Node
		want      []Offer
	}{
		{"an unmanaged node is offered the target", "r2", nil, []*corev1.Node{stranger("s")}, []Offer{{Node: "s", Target: "r2"}}},
		{"a newer target replaces the offer", "r2", nil, []*corev1.Node{stranger("s", offered("r1"))}, []Offer{{Node: "s", Target: "r2"}}},
		{"an offer in place is not written again", "r2", nil, []*corev1.Node{stranger("s", offered("r2"))}, nil},
		{"a managed node's offer is removed", "r2", []*corev1.Node{node("m", "r2", offered("r2"))}, nil, []Offer{{Node: "m", Target: ""}}},
		{"a managed node without one is left alone", "r2", []*corev1.Node{node("m", "r1")}, nil, nil},
		{"no target: nothing to offer, an old offer goes", "", nil, []*corev1.Node{stranger("s", offered("r1")), stranger("t")}, []Offer{{Node: "s", Target: ""}}},
		{"an adopted node, Done, loses its approval", "r2", []*corev1.Node{node("m", "r2", approved)}, nil, []Offer{{Node: "m", SpentApproval: true}}},
		{"and its offer with it", "r2", []*corev1.Node{node("m", "r2", offered("r2"), approved)}, nil, []Offer{{Node: "m", SpentApproval: true}}},
		{"Done at an older target, it loses it too", "r2", []*corev1.Node{node("m", "r1", approved)}, nil, []Offer{{Node: "m", SpentApproval: true}}},
		{"a node being adopted keeps its approval", "r2", []*corev1.Node{stranger("a", desiring("r2"), approved, inState(protocol.NodeWorking, ""))}, nil, nil},
		{"a node whose adoption failed keeps it", "r2", []*corev1.Node{stranger("a", desiring("r2"), approved, inState(protocol.NodeDegraded, "writing /etc/chrony.conf"))}, nil, nil},
		{"a waiting node keeps it", "r2", nil, []*corev1.Node{stranger("s", pendingFor("r2"), approved)}, nil},
		{"a value that never approved is not touched", "r2", []*corev1.Node{node("m", "r2", func(n *corev1.Node) { n.Annotations[protocol.AdoptAnnotation] = "yes" })}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", tc.target), Nodes: tc.nodes, Unmanaged: tc.unmanaged})
			if !slices.Equal(d.Offers, tc.want) {
				t.Errorf("Offers = %v, want %v", d.Offers, tc.want)
			}
		})
	}
	t.Run("offers are made while paused and use no capacity", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "r2", paused), Nodes: []*corev1.Node{node("m", "r1", desiring("r2"), inState(protocol.NodeWorking, ""))},
			Unmanaged: []*corev1.Node{stranger("s")}})
		if !slices.Equal(d.Offers, []Offer{{Node: "s", Target: "r2"}}) || len(d.Next) != 0 {
			t.Errorf("Offers %v Next %v; want s offered r2 and nothing started", d.Offers, d.Next)
		}
	})
}

func TestStrayOffer(t *testing.T) {
	pools := NewPools([]*mcfgv1.MachineConfigPool{pool("worker", "r1")})
	for name, c := range map[string]struct {
		n    *corev1.Node
		want bool
	}{
		"in a pool":               {stranger("s", offered("r1")), false},
		"in no pool, with offer":  {stranger("s", offered("r1"), func(n *corev1.Node) { n.Labels = map[string]string{} }), true},
		"in no pool, no offer":    {stranger("s", func(n *corev1.Node) { n.Labels = map[string]string{} }), false},
		"windows node with offer": {stranger("s", offered("r1"), label(OSLabel, "windows")), true},
	} {
		if got := StrayOffer(c.n, pools); got != c.want {
			t.Errorf("%s: StrayOffer = %v, want %v", name, got, c.want)
		}
	}
}

func TestDecideAdoption(t *testing.T) {
	two := maxUnavail(intstr.FromInt32(2))
	for _, tc := range []struct {
		name      string
		pool      *mcfgv1.MachineConfigPool
		nodes     []*corev1.Node
		unmanaged []*corev1.Node
		want      []string
		awaiting  []string
	}{
		{"pending without approval waits", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"))}, nil, []string{"s"}},
		{"approved on the node is adopted", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), approved)}, []string{"s"}, nil},
		{"approved on the pool is adopted", pool("worker", "r1", poolApproved), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"))}, []string{"s"}, nil},
		{"only adopt=true approves", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), func(n *corev1.Node) { n.Annotations[protocol.AdoptAnnotation] = "yes" })}, nil, []string{"s"}},
		{"a plan for an earlier target is not this target's", pool("worker", "r2"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), offered("r2"), approved)}, nil, nil},
		{"offered but not compared yet", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", offered("r1"), approved)}, nil, nil},
		{"pending without a plan: the offer names the target", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), approved, func(n *corev1.Node) { delete(n.Annotations, protocol.AdoptionPlanAnnotation) })}, []string{"s"}, nil},
		{"a refused plan is never adopted", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", refusedFor("r1"), approved)}, nil, []string{"s"}},
		{"not Ready waits", pool("worker", "r1"), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), approved, notReady)}, nil, []string{"s"}},
		{"paused: no adoption", pool("worker", "r1", paused), nil,
			[]*corev1.Node{stranger("s", pendingFor("r1"), approved)}, nil, []string{"s"}},
		{"within maxUnavailable: one of two", pool("worker", "r1", poolApproved), nil,
			[]*corev1.Node{stranger("s2", pendingFor("r1"), created(2)), stranger("s1", pendingFor("r1"), created(1))}, []string{"s1"}, []string{"s2"}},
		{"a node being adopted holds the slot", pool("worker", "r1", poolApproved),
			[]*corev1.Node{stranger("s1", desiring("r1"), inState(protocol.NodeWorking, ""))},
			[]*corev1.Node{stranger("s2", pendingFor("r1"))}, nil, []string{"s2"}},
		{"an updating member holds the slot", pool("worker", "r1", poolApproved),
			[]*corev1.Node{node("m", "r0", desiring("r1"), inState(protocol.NodeWorking, ""))},
			[]*corev1.Node{stranger("s", pendingFor("r1"))}, nil, []string{"s"}},
		{"waiting nodes use no capacity: the pool's own update goes on", pool("worker", "r1"),
			[]*corev1.Node{node("m", "r0")},
			[]*corev1.Node{stranger("s", pendingFor("r1")), stranger("t", pendingFor("r1"), notReady)}, []string{"m"}, []string{"s", "t"}},
		{"ordered among the pool's own nodes, oldest first", pool("worker", "r1", poolApproved, two),
			[]*corev1.Node{node("m3", "r0", created(3)), node("m1", "r0", created(1))},
			[]*corev1.Node{stranger("s", pendingFor("r1"), created(2))}, []string{"m1", "s"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: tc.pool, Nodes: tc.nodes, Unmanaged: tc.unmanaged})
			if !slices.Equal(d.Next, tc.want) {
				t.Errorf("Next = %v, want %v", d.Next, tc.want)
			}
			var adopted []string
			for _, n := range tc.unmanaged {
				if slices.Contains(d.Next, n.Name) {
					adopted = append(adopted, n.Name)
				}
			}
			if !slices.Equal(d.Adopted, adopted) {
				t.Errorf("Adopted = %v, want %v", d.Adopted, adopted)
			}
			var awaiting []string
			for _, a := range d.AwaitingAdoption {
				awaiting = append(awaiting, a.Node)
			}
			if !slices.Equal(awaiting, tc.awaiting) {
				t.Errorf("AwaitingAdoption = %v, want %v", awaiting, tc.awaiting)
			}
		})
	}
}

// A node whose adoption starts is counted at once (unavailable until Done); a node waiting is
// not counted at all.
func TestAdoptionCounts(t *testing.T) {
	p := pool("worker", "r1", poolApproved)
	d := Decide(Input{Pool: p, Nodes: []*corev1.Node{node("m", "r1")},
		Unmanaged: []*corev1.Node{stranger("s", pendingFor("r1")), stranger("t", pendingFor("r1"))}})
	if got, want := countsOf(d.Status), (counts{2, 1, 1, 1, 0}); got != want {
		t.Errorf("counts %+v, want %+v (m, and s being adopted; t waiting is not counted)", got, want)
	}
	if poolcondition.IsTrue(&d.Status, mcfgv1.MachineConfigPoolUpdated) {
		t.Error("Updated while a node is being adopted")
	}
}

func TestNodesAwaitingAdoptionCondition(t *testing.T) {
	now := metav1.NewTime(time.Unix(5000, 0))
	t.Run("names each node with its plan and says how to approve", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "r1"), Nodes: []*corev1.Node{node("m", "r1")}, Now: now,
			Unmanaged: []*corev1.Node{stranger("s2", refusedFor("r1")), stranger("s1", pendingFor("r1"))}})
		c := poolcondition.Get(&d.Status, poolcondition.NodesAwaitingAdoption)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "ApprovalRequired" {
			t.Fatalf("condition %+v, want True ApprovalRequired", c)
		}
		for _, want := range []string{
			"Node s1: adopting into r1 would write 1 file (/etc/chrony.conf), drain, then reboot",
			"; Node s2 cannot be adopted into r1: osImageURL",
			"`mco adopt NODE` or `mco adopt --pool worker`",
		} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("message %q lacks %q", c.Message, want)
			}
		}
		if poolcondition.IsTrue(&d.Status, mcfgv1.MachineConfigPoolDegraded) {
			t.Error("nodes awaiting adoption made the pool Degraded")
		}
		if !poolcondition.IsTrue(&d.Status, mcfgv1.MachineConfigPoolUpdated) {
			t.Error("waiting nodes are not counted, so the pool's own nodes are Updated")
		}
	})
	t.Run("approved nodes waiting for capacity", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "r1", poolApproved), Now: now,
			Nodes:     []*corev1.Node{node("m", "r0", desiring("r1"), inState(protocol.NodeWorking, ""))},
			Unmanaged: []*corev1.Node{stranger("s", pendingFor("r1"))}})
		c := poolcondition.Get(&d.Status, poolcondition.NodesAwaitingAdoption)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "Approved" ||
			!strings.HasPrefix(c.Message, "Node s (approved, waiting for maxUnavailable): adopting into r1") || strings.Contains(c.Message, "mco adopt") {
			t.Fatalf("condition %+v", c)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		var waiting []*corev1.Node
		for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			waiting = append(waiting, stranger(name, pendingFor("r1")))
		}
		d := Decide(Input{Pool: pool("worker", "r1"), Unmanaged: waiting, Now: now})
		c := poolcondition.Get(&d.Status, poolcondition.NodesAwaitingAdoption)
		if c == nil || !strings.Contains(c.Message, "Node e: ") || strings.Contains(c.Message, "Node f") || !strings.Contains(c.Message, "and 2 more") {
			t.Fatalf("message %q, want 5 nodes named and 2 more", c.Message)
		}
	})
	t.Run("False when none waits", func(t *testing.T) {
		d := Decide(Input{Pool: pool("worker", "r1"), Nodes: []*corev1.Node{node("m", "r1")}, Unmanaged: []*corev1.Node{stranger("s", offered("r1"))}, Now: now})
		if c := poolcondition.Get(&d.Status, poolcondition.NodesAwaitingAdoption); c == nil || c.Status != corev1.ConditionFalse {
			t.Fatalf("condition %+v, want False", c)
		}
	})
}

// Two approved nodes, maxUnavailable 1: one is adopted at a time, the second once the first's
// agent reports Done.
func TestAdoptionOneAtATime(t *testing.T) {
	p := pool("worker", "r1", poolApproved)
	s1, s2 := stranger("s1", pendingFor("r1"), created(1)), stranger("s2", pendingFor("r1"), created(2))
	var members []*corev1.Node
	unmanaged := []*corev1.Node{s1, s2}
	var order []string
	rounds := 0
	for round := 0; round < 10 && len(order) < 2; round++ {
		rounds++
		d := Decide(Input{Pool: p, Nodes: members, Unmanaged: unmanaged})
		if len(d.Next) > 1 || d.Status.UnavailableMachineCount > 1 {
			t.Fatalf("round %d: next %v, %d unavailable; limit 1", round, d.Next, d.Status.UnavailableMachineCount)
		}
		for _, name := range d.Next {
			order = append(order, name)
			i := slices.IndexFunc(unmanaged, func(n *corev1.Node) bool { return n.Name == name })
			n := unmanaged[i]
			unmanaged = slices.Delete(unmanaged, i, i+1)
			n.Annotations[protocol.DesiredConfigAnnotation] = "r1"
			members = append(members, n)
		}
		// The agent: a node given its config works one round, then reports Done.
		for _, n := range members {
			if n.Annotations[protocol.StateAnnotation] == string(protocol.NodeWorking) {
				n.Annotations[protocol.CurrentConfigAnnotation] = "r1"
				n.Annotations[protocol.StateAnnotation] = string(protocol.NodeDone)
				delete(n.Annotations, protocol.AdoptionAnnotation)
			} else if n.Annotations[protocol.CurrentConfigAnnotation] == "" {
				n.Annotations[protocol.StateAnnotation] = string(protocol.NodeWorking)
			}
		}
	}
	if !slices.Equal(order, []string{"s1", "s2"}) || rounds != 3 {
		t.Fatalf("adopted %v in %d rounds, want s1, then s2 once s1 is Done (round 3)", order, rounds)
	}
}

// A node whose adoption into an older target started, before its agent began to disrupt it, is
// moved to the new target like any superseded node: the approval is of the node.
func TestAdoptionSuperseded(t *testing.T) {
	adopting := stranger("s", desiring("r1"), inState(protocol.NodeWorking, ""))
	d := Decide(Input{Pool: pool("worker", "r2"), Nodes: []*corev1.Node{adopting, node("m", "r1")}})
	if !slices.Equal(d.Next, []string{"s"}) || !slices.Equal(d.Superseded, []string{"s"}) {
		t.Errorf("next %v superseded %v, want s moved to r2 without capacity", d.Next, d.Superseded)
	}
}
