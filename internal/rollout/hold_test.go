package rollout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

func held(n *corev1.Node) { n.Annotations[rolloutv1.HoldAnnotation] = "true" }
func holdValue(v string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[rolloutv1.HoldAnnotation] = v }
}
func priority(v string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[rolloutv1.UpdatePriorityAnnotation] = v }
}

// A held node is chosen in no role; priority orders the rest, higher first.
func TestDecideHoldAndPriority(t *testing.T) {
	three := maxUnavail(intstr.FromInt32(3))
	for _, tc := range []struct {
		name           string
		pool           *mcfgv1.MachineConfigPool
		nodes          []*corev1.Node
		want           []string
		wantSuperseded []string
	}{
		{
			name:  "a held healthy node is not started; the next one is",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", held), node("b", "old")},
			want:  []string{"b"},
		},
		{
			name:  "hold false holds nothing",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", holdValue("false")), node("b", "old")},
			want:  []string{"a"},
		},
		{
			name:  "only true holds",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", holdValue("yes")), node("b", "old")},
			want:  []string{"a"},
		},
		{
			name:  "every node held: nothing starts",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("a", "old", held), node("b", "old", held)},
			want:  nil,
		},
		{
			name: "a held failing node is not retargeted",
			pool: pool("worker", "fixed", three),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("broken"), held)},
			want: []string{"b"},
		},
		{
			name:  "a held superseded node is not moved (it finishes its older update)",
			pool:  pool("worker", "full", three),
			nodes: []*corev1.Node{node("a", "old", desiring("partial"), held), node("b", "old")},
			want:  []string{"b"},
		},
		{
			name:  "a held node already targeted stays targeted and uses its slot",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", desiring("new"), working, held), node("b", "old")},
			want:  nil,
		},
		{
			name:  "a held node still uses up capacity when unavailable",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", notReady, held), node("b", "old")},
			want:  nil,
		},
		{
			name:  "higher priority first, across zones and ages",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("a", "old", zone("a"), created(1)), node("b", "old", zone("b"), created(2), priority("10")), node("c", "old", created(3), priority("5")), node("d", "old", zone("a"), created(0))},
			want:  []string{"b", "c", "d"},
		},
		{
			name:  "negative priority goes after the unset",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("a", "old", priority("-1")), node("b", "old"), node("c", "old"), node("d", "old")},
			want:  []string{"b", "c", "d"},
		},
		{
			name:  "equal priorities keep zone, age, name",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("u", "old", priority("2"), created(1)), node("z", "old", zone("a"), priority("2"), created(9)), node("y", "old", zone("a"), priority("2"), created(9)), node("x", "old")},
			want:  []string{"y", "z", "u"},
		},
		{
			name:  "an unparsable priority counts as 0",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", priority("high"), created(1)), node("b", "old", created(2))},
			want:  []string{"a"},
		},
		{
			name:  "the held top-priority node is skipped",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old"), node("b", "old", priority("10"), held), node("c", "old", priority("1"))},
			want:  []string{"c"},
		},
		{
			name:           "superseded nodes are moved by priority within a budget",
			pool:           pool("worker", "full", three),
			nodes:          []*corev1.Node{node("a", "old", desiring("partial")), node("b", "old", desiring("partial"), priority("3"))},
			want:           []string{"b", "a"},
			wantSuperseded: []string{"b", "a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: tc.pool, Nodes: tc.nodes})
			if !slices.Equal(d.Next, tc.want) || !slices.Equal(d.Superseded, tc.wantSuperseded) {
				t.Errorf("Next = %v superseded %v, want %v and %v", d.Next, d.Superseded, tc.want, tc.wantSuperseded)
			}
		})
	}
}

// A held node waiting for adoption is not adopted; the one beside it is.
func TestDecideHeldNotAdopted(t *testing.T) {
	d := Decide(Input{Pool: pool("worker", "r1", maxUnavail(intstr.FromInt32(2))), Unmanaged: []*corev1.Node{
		stranger("s1", pendingFor("r1"), approved, held, created(1)), stranger("s2", pendingFor("r1"), approved, created(2)),
	}})
	if !slices.Equal(d.Next, []string{"s2"}) || !slices.Equal(d.Adopted, []string{"s2"}) {
		t.Errorf("next %v adopted %v, want s2 alone", d.Next, d.Adopted)
	}
}

func TestHoldProblems(t *testing.T) {
	d := Decide(Input{Pool: pool("worker", "new"), Nodes: []*corev1.Node{
		node("a", "new", priority("high")), node("b", "new", holdValue("yes")), node("c", "new", priority("7"), held), node("d", "new", holdValue("false")),
	}})
	want := []string{
		`node a: annotation rollout.mco.dev/update-priority is "high", not an integer; counting it as 0`,
		`node b: annotation rollout.mco.dev/hold is "yes"; only "true" holds a node, so it is not held`,
	}
	if !slices.Equal(d.Problems, want) {
		t.Errorf("Problems = %q, want %q", d.Problems, want)
	}
}

// The pool waits for held nodes behind its target: not Updated, not Degraded, NodesHeld naming
// them and the release command; Updating is False once nothing but held nodes remain.
func TestStatusHeld(t *testing.T) {
	now := metav1.NewTime(time.Unix(5000, 0))
	for _, tc := range []struct {
		name                        string
		nodes                       []*corev1.Node
		updated, updating, degraded corev1.ConditionStatus
		heldStatus                  corev1.ConditionStatus // "" is no condition at all
		heldMessage                 string
	}{
		{
			name:    "no hold: no condition",
			nodes:   []*corev1.Node{node("a", "new"), node("b", "new")},
			updated: corev1.ConditionTrue, updating: corev1.ConditionFalse, degraded: corev1.ConditionFalse,
		},
		{
			name:    "only a held node behind",
			nodes:   []*corev1.Node{node("a", "new"), node("b", "old", held)},
			updated: corev1.ConditionFalse, updating: corev1.ConditionFalse, degraded: corev1.ConditionFalse,
			heldStatus:  corev1.ConditionTrue,
			heldMessage: "Waiting for held nodes: b (on old). Release them with `mco hold --undo b`",
		},
		{
			name:    "a held node behind and another updating",
			nodes:   []*corev1.Node{node("a", "old", desiring("new"), working), node("c", "old", held), node("b", "old", held)},
			updated: corev1.ConditionFalse, updating: corev1.ConditionTrue, degraded: corev1.ConditionFalse,
			heldStatus:  corev1.ConditionTrue,
			heldMessage: "Waiting for held nodes: b (on old), c (on old). Release them with `mco hold --undo b c`",
		},
		{
			name:    "a held node on the target is not waited for",
			nodes:   []*corev1.Node{node("a", "new", held), node("b", "new")},
			updated: corev1.ConditionTrue, updating: corev1.ConditionFalse, degraded: corev1.ConditionFalse,
		},
		{
			name:    "a held node finishing its update to the target is not held up",
			nodes:   []*corev1.Node{node("a", "old", desiring("new"), working, held), node("b", "new")},
			updated: corev1.ConditionFalse, updating: corev1.ConditionTrue, degraded: corev1.ConditionFalse,
		},
		{
			name:    "a held node that failed is still degraded",
			nodes:   []*corev1.Node{node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), held), node("b", "new")},
			updated: corev1.ConditionFalse, updating: corev1.ConditionTrue, degraded: corev1.ConditionTrue,
			heldStatus:  corev1.ConditionTrue,
			heldMessage: "Waiting for held nodes: a (on old). Release them with `mco hold --undo a`",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new"), Nodes: tc.nodes, Now: now})
			for _, c := range []struct {
				t    mcfgv1.MachineConfigPoolConditionType
				want corev1.ConditionStatus
			}{{mcfgv1.MachineConfigPoolUpdated, tc.updated}, {mcfgv1.MachineConfigPoolUpdating, tc.updating}, {mcfgv1.MachineConfigPoolDegraded, tc.degraded}} {
				if got := poolcondition.Get(&d.Status, c.t); got == nil || got.Status != c.want {
					t.Errorf("%s = %+v, want %s", c.t, got, c.want)
				}
			}
			if want := tc.updating == corev1.ConditionFalse && tc.heldStatus == corev1.ConditionTrue; d.OnlyHeld != want {
				t.Errorf("OnlyHeld = %v, want %v", d.OnlyHeld, want)
			}
			got := poolcondition.Get(&d.Status, poolcondition.NodesHeld)
			switch {
			case tc.heldStatus == "" && got != nil:
				t.Errorf("NodesHeld = %+v, want none", got)
			case tc.heldStatus != "" && (got == nil || got.Status != tc.heldStatus || got.Message != tc.heldMessage):
				t.Errorf("NodesHeld = %+v, want %s %q", got, tc.heldStatus, tc.heldMessage)
			}
		})
	}
}

// Once a pool had held nodes, releasing them leaves NodesHeld False rather than removing it.
func TestStatusHeldReleased(t *testing.T) {
	now := metav1.NewTime(time.Unix(5000, 0))
	p := pool("worker", "new")
	d := Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "old", held)}, Now: now})
	p.Status = d.Status
	d = Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "new")}, Now: now})
	if c := poolcondition.Get(&d.Status, poolcondition.NodesHeld); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("NodesHeld after release = %+v, want False", c)
	}
}

// Past maxNamedNodes the message counts the rest and the command takes a placeholder.
func TestStatusHeldBounded(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 13 {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i), "old", held))
	}
	d := Decide(Input{Pool: pool("worker", "new"), Nodes: nodes})
	c := poolcondition.Get(&d.Status, poolcondition.NodesHeld)
	if c == nil || !strings.Contains(c.Message, "n09 (on old), and 3 more.") || !strings.HasSuffix(c.Message, "`mco hold --undo NODE...`") || strings.Contains(c.Message, "n10") {
		t.Errorf("NodesHeld = %+v", c)
	}
}

// firstCandidates stays the sorted prefix with priorities in play.
func TestFirstCandidatesWithPriority(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var nodes []*corev1.Node
	for i := range 300 {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("n-%03d", i),
			CreationTimestamp: metav1.NewTime(base.Add(time.Duration(rng.IntN(20)) * time.Second)),
			Labels:            map[string]string{},
			Annotations:       map[string]string{},
		}}
		if z := rng.IntN(3); z > 0 {
			n.Labels[ZoneLabel] = fmt.Sprintf("zone-%d", z)
		}
		switch rng.IntN(4) {
		case 0:
			n.Annotations[rolloutv1.UpdatePriorityAnnotation] = fmt.Sprint(rng.IntN(5) - 2)
		case 1:
			n.Annotations[rolloutv1.UpdatePriorityAnnotation] = "junk"
		}
		nodes = append(nodes, n)
	}
	sorted := slices.Clone(nodes)
	SortCandidates(sorted)
	for i := 1; i < len(sorted); i++ {
		if Priority(sorted[i-1]) < Priority(sorted[i]) {
			t.Fatalf("sorted out of priority order at %d: %s before %s", i, sorted[i-1].Name, sorted[i].Name)
		}
	}
	for _, k := range []int{1, 2, 5, 36, 37, 100, 300} {
		if got := firstCandidates(slices.Clone(nodes), k); !slices.Equal(got, sorted[:k]) {
			t.Errorf("k=%d: %v, want %v", k, names(got), names(sorted[:k]))
		}
	}
}

// BenchmarkFirstCandidates: picking 2 of 5,000 waiting nodes, a quarter of them with a priority,
// as the node controller does on every node event of a large rollout.
func BenchmarkFirstCandidates(b *testing.B) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodes := make([]*corev1.Node, 5000)
	for i := range nodes {
		nodes[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("n-%04d", i), CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i%97) * time.Second)),
			Labels: map[string]string{ZoneLabel: fmt.Sprintf("zone-%d", i%3)}, Annotations: map[string]string{},
		}}
		if i%4 == 0 {
			nodes[i].Annotations[rolloutv1.UpdatePriorityAnnotation] = fmt.Sprint(i % 5)
		}
	}
	for b.Loop() {
		firstCandidates(nodes, 2)
	}
}
