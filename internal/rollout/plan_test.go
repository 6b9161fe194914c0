package rollout

import (
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

func TestMaxUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value *intstr.IntOrString
		nodes int
		want  int
		err   bool
	}{
		{"unset is 1", nil, 10, 1, false},
		{"count", ptrTo(intstr.FromInt32(3)), 10, 3, false},
		{"count above pool size", ptrTo(intstr.FromInt32(30)), 10, 30, false},
		{"zero is coerced to 1", ptrTo(intstr.FromInt32(0)), 10, 1, false},
		{"negative is coerced to 1", ptrTo(intstr.FromInt32(-2)), 10, 1, false},
		{"percent", ptrTo(intstr.FromString("30%")), 10, 3, false},
		{"percent rounds down", ptrTo(intstr.FromString("25%")), 10, 2, false},
		{"small percent of a small pool is still 1", ptrTo(intstr.FromString("10%")), 5, 1, false},
		{"0%", ptrTo(intstr.FromString("0%")), 100, 1, false},
		{"100%", ptrTo(intstr.FromString("100%")), 7, 7, false},
		{"garbage is 1 and an error", ptrTo(intstr.FromString("lots")), 10, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pool("worker", "r1")
			p.Spec.MaxUnavailable = tc.value
			got, err := MaxUnavailable(p, tc.nodes)
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("MaxUnavailable = %d, %v; want %d, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestDecideNext(t *testing.T) {
	three := maxUnavail(intstr.FromInt32(3))
	for _, tc := range []struct {
		name  string
		pool  *mcfgv1.MachineConfigPool
		nodes []*corev1.Node
		want  []string
	}{
		{
			name:  "default picks one",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old"), node("b", "old")},
			want:  []string{"a"},
		},
		{
			name:  "count picks up to the limit",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("a", "old"), node("b", "old"), node("c", "old"), node("d", "old")},
			want:  []string{"a", "b", "c"},
		},
		{
			name:  "percent of 10 nodes",
			pool:  pool("worker", "new", maxUnavail(intstr.FromString("30%"))),
			nodes: tenNodes("old"),
			want:  []string{"n0", "n1", "n2"},
		},
		{
			name:  "paused picks nothing",
			pool:  pool("worker", "new", three, paused),
			nodes: []*corev1.Node{node("a", "old")},
			want:  nil,
		},
		{
			name:  "no target yet picks nothing",
			pool:  pool("worker", ""),
			nodes: []*corev1.Node{node("a", "old")},
			want:  nil,
		},
		{
			name:  "a node mid-update uses up the limit",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeWorking, "")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "applied but still Working is unavailable",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "new", inState(protocol.NodeWorking, "")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "not Ready uses up the limit and is never a candidate",
			pool:  pool("worker", "new", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("a", "old", notReady), node("b", "old"), node("c", "old")},
			want:  []string{"b"},
		},
		{
			name:  "cordoned counts as unavailable",
			pool:  pool("worker", "new", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("a", "old", cordoned), node("b", "old"), node("c", "old")},
			want:  []string{"b"},
		},
		{
			name:  "disk pressure counts as unavailable",
			pool:  pool("worker", "new", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("a", "old", condition(corev1.NodeDiskPressure, corev1.ConditionTrue)), node("b", "old"), node("c", "old")},
			want:  []string{"b"},
		},
		{
			name:  "a node failing to reach this target halts the pool",
			pool:  pool("worker", "new"),
			nodes: []*corev1.Node{node("a", "old", desiring("new"), inState(protocol.NodeDegraded, "boom")), node("b", "old")},
			want:  nil,
		},
		{
			name:  "a node failing towards an older target is retargeted (a fix can roll out)",
			pool:  pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"), node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), created(1))},
			want:  []string{"a"},
		},
		{
			name: "a node failing towards an older target holds its slot: nothing else starts beside it",
			pool: pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"), node("c", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"))},
			want: []string{"a"},
		},
		{
			name: "a node Degraded in its own config is retargeted, holding its slot (deleting the config that broke it reaches it)",
			pool: pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"), node("c", "old"),
				node("a", "old", inState(protocol.NodeDegraded, `unexpected on-disk state validating against old: missing file: "/etc/x/f"`))},
			want: []string{"a"},
		},
		{
			name: "a failed node mco cordoned for that update is retargeted",
			pool: pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("broken"))},
			want: []string{"a"},
		},
		{
			name: "also while its drain was still running",
			pool: pool("worker", "fixed"),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "drain timed out"), drainingFor("broken"))},
			want: []string{"a"},
		},
		{
			name: "the pool going back to the failed node's current config retargets it too",
			pool: pool("worker", "old"),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("broken"))},
			want: []string{"a"},
		},
		{
			name: "a failed node an admin cordoned stays alone",
			pool: pool("worker", "fixed", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), cordoned)},
			want: []string{"b"},
		},
		{
			name: "a cordoned failed node whose kubelet is down is not retargeted",
			pool: pool("worker", "fixed", maxUnavail(intstr.FromInt32(2))),
			nodes: []*corev1.Node{node("b", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("broken"), notReady)},
			want: []string{"b"},
		},
		{
			name: "every failed node is retargeted, then healthy ones up to the limit",
			pool: pool("worker", "fixed", maxUnavail(intstr.FromInt32(3))),
			nodes: []*corev1.Node{node("c", "old"), node("d", "old"),
				node("a", "old", desiring("broken"), inState(protocol.NodeDegraded, "boom"), drainedFor("broken")),
				node("b", "old", desiring("broken"), inState(protocol.NodeUnreconcilable, "no"))},
			want: []string{"a", "b", "c"},
		},
		{
			name:  "nodes already targeted are not candidates",
			pool:  pool("worker", "new", three),
			nodes: []*corev1.Node{node("a", "new"), node("b", "old"), node("c", "new")},
			want:  []string{"b"},
		},
		{
			name: "zoned first by zone name, then oldest first, unzoned last",
			pool: pool("worker", "new", maxUnavail(intstr.FromInt32(5))),
			nodes: []*corev1.Node{
				node("unzoned-old", "old", created(1)),
				node("b-new", "old", zone("b"), created(50)),
				node("a-new", "old", zone("a"), created(60)),
				node("b-old", "old", zone("b"), created(10)),
				node("unzoned-new", "old", created(100)),
				node("a-old", "old", zone("a"), created(20)),
			},
			want: []string{"a-old", "a-new", "b-old", "b-new", "unzoned-old"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: tc.pool, Nodes: tc.nodes})
			if !slices.Equal(d.Next, tc.want) {
				t.Errorf("Next = %v, want %v", d.Next, tc.want)
			}
		})
	}
}

func tenNodes(cfg string) []*corev1.Node {
	var nodes []*corev1.Node
	for i := range 10 {
		nodes = append(nodes, node("n"+string(rune('0'+i)), cfg, created(int64(i))))
	}
	return nodes
}

// TestRolloutNeverExceedsLimit drives Decide against a simulated agent that finishes one step
// per round and checks, after every round, that no more nodes are unavailable than allowed and
// that the rollout finishes.
func TestRolloutNeverExceedsLimit(t *testing.T) {
	for _, mu := range []intstr.IntOrString{intstr.FromInt32(1), intstr.FromInt32(3), intstr.FromString("30%")} {
		t.Run(mu.String(), func(t *testing.T) {
			p := pool("worker", "new", maxUnavail(mu))
			nodes := tenNodes("old")
			limit, _ := MaxUnavailable(p, len(nodes))
			for round := 0; round < 100; round++ {
				d := Decide(Input{Pool: p, Nodes: nodes})
				for _, n := range nodes {
					if slices.Contains(d.Next, n.Name) {
						n.Annotations[protocol.DesiredConfigAnnotation] = "new"
					}
				}
				if d.Status.UnavailableMachineCount > int32(limit) {
					t.Fatalf("round %d: %d unavailable, limit %d", round, d.Status.UnavailableMachineCount, limit)
				}
				if d.Completed {
					if d.Status.UpdatedMachineCount != 10 || d.Status.Configuration.Name != "new" {
						t.Fatalf("completed with status %+v", d.Status)
					}
					return
				}
				// The agent: Working nodes finish, targeted nodes start.
				for _, n := range nodes {
					switch {
					case n.Annotations[protocol.StateAnnotation] == string(protocol.NodeWorking):
						n.Annotations[protocol.CurrentConfigAnnotation] = "new"
						n.Annotations[protocol.StateAnnotation] = string(protocol.NodeDone)
					case n.Annotations[protocol.DesiredConfigAnnotation] != n.Annotations[protocol.CurrentConfigAnnotation]:
						n.Annotations[protocol.StateAnnotation] = string(protocol.NodeWorking)
					}
				}
			}
			t.Fatal("rollout did not complete in 100 rounds")
		})
	}
}

// A pacing budget only lowers maxUnavailable's allowance, and never holds back a failing
// node's retarget.
func TestDecideStartBudget(t *testing.T) {
	three := maxUnavail(intstr.FromInt32(3))
	failing := node("f", "old", desiring("older"), inState(protocol.NodeDegraded, "boom"))
	for _, tc := range []struct {
		name        string
		budget      *int
		nodes       []*corev1.Node
		want        []string
		wantStarted int
	}{
		{"no budget: maxUnavailable", nil, tenNodes("old"), []string{"n0", "n1", "n2"}, 3},
		{"budget below the limit", ptrTo(1), tenNodes("old"), []string{"n0"}, 1},
		{"budget above the limit", ptrTo(8), tenNodes("old"), []string{"n0", "n1", "n2"}, 3},
		{"zero budget starts nothing", ptrTo(0), tenNodes("old"), nil, 0},
		{"a failing node is retargeted anyway", ptrTo(0), []*corev1.Node{failing, node("a", "old")}, []string{"f"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new", three), Nodes: tc.nodes, StartBudget: tc.budget})
			if !slices.Equal(d.Next, tc.want) || d.Started != tc.wantStarted {
				t.Errorf("next %v started %d, want %v and %d", d.Next, d.Started, tc.want, tc.wantStarted)
			}
		})
	}
}
