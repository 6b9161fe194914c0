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

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// targetedAgo records that the node was given cfg d before now, as the node controller does.
func targetedAgo(cfg string, now time.Time, d time.Duration) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Annotations[protocol.DesiredConfigAnnotation] = cfg
		n.Annotations[rolloutv1.TargetedAnnotation] = protocol.Targeted(cfg, now.Add(-d))
	}
}

// A rollout never waits silently: a Ready node that has not finished moving to its target long
// after it was given it is named on the pool, with what its agent said, unless something else
// already reports why.
func TestStalledNodesAreReported(t *testing.T) {
	now := time.Unix(100000, 0)
	one := maxUnavail(intstr.FromInt32(1))
	for _, tc := range []struct {
		name        string
		threshold   time.Duration
		nodes       []*corev1.Node
		wantStalled []string
		wantWords   []string
		recheck     time.Duration
	}{
		{
			name:        "an agent that never started: Done on the old config long after the target",
			nodes:       []*corev1.Node{node("a", "old", targetedAgo("new", now, 31*time.Minute)), node("b", "old")},
			wantStalled: []string{"a"},
			wantWords:   []string{"Node a was given new at", "its agent reports Done on old: it has not started the update; is its agent running?", "threshold 30m0s"},
		},
		{
			name:        "an agent working for too long",
			threshold:   10 * time.Minute,
			nodes:       []*corev1.Node{node("a", "old", targetedAgo("new", now, 11*time.Minute), inState(protocol.NodeWorking, "")), node("b", "old")},
			wantStalled: []string{"a"},
			wantWords:   []string{"its agent reports Working on old)", "threshold 10m0s"},
		},
		{
			name:    "below the threshold nothing is reported, and the pool is rechecked when it would cross",
			nodes:   []*corev1.Node{node("a", "old", targetedAgo("new", now, 20*time.Minute), inState(protocol.NodeWorking, "")), node("b", "old")},
			recheck: 10 * time.Minute,
		},
		{
			name:  "a record of an earlier target is not this one's",
			nodes: []*corev1.Node{node("a", "old", targetedAgo("older", now, time.Hour), desiring("new")), node("b", "old")},
		},
		{
			name:  "no record (targeted by an earlier controller): not timed",
			nodes: []*corev1.Node{node("a", "old", desiring("new")), node("b", "old")},
		},
		{
			name:  "a degraded node is reported as degraded, not stalled",
			nodes: []*corev1.Node{node("a", "old", targetedAgo("new", now, time.Hour), inState(protocol.NodeDegraded, "boom")), node("b", "old")},
		},
		{
			name:  "a NotReady node is reported as unresponsive, not stalled",
			nodes: []*corev1.Node{node("a", "old", targetedAgo("new", now, time.Hour), inState(protocol.NodeWorking, ""), notReady), node("b", "old")},
		},
		{
			name: "a drain blocked by a budget is reported as such, not stalled",
			nodes: []*corev1.Node{node("a", "old", targetedAgo("new", now, time.Hour), inState(protocol.NodeWorking, ""), drainingFor("new"),
				func(n *corev1.Node) { n.Annotations[protocol.DrainBlockedAnnotation] = "pdb/x" }), node("b", "old")},
		},
		{
			name:  "a node that finished is not stalled, however long it took",
			nodes: []*corev1.Node{node("a", "new", targetedAgo("new", now, time.Hour)), node("b", "old")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Pool: pool("worker", "new", one), Nodes: tc.nodes, Now: metav1.NewTime(now), StallThreshold: tc.threshold})
			var got []string
			for _, s := range d.Stalled {
				got = append(got, s.Node)
			}
			if !slices.Equal(got, tc.wantStalled) {
				t.Errorf("stalled %v, want %v", got, tc.wantStalled)
			}
			c := poolcondition.Get(&d.Status, poolcondition.UpdateStalled)
			switch {
			case len(tc.wantStalled) > 0 && (c == nil || c.Status != corev1.ConditionTrue):
				t.Errorf("UpdateStalled: %+v, want True", c)
			case len(tc.wantStalled) == 0 && c != nil:
				t.Errorf("a pool that never stalled has UpdateStalled: %+v", c)
			}
			for _, w := range tc.wantWords {
				if c == nil || !strings.Contains(c.Message, w) {
					t.Errorf("UpdateStalled's message has no %q: %+v", w, c)
				}
			}
			if tc.recheck > 0 && d.RecheckAfter != tc.recheck {
				t.Errorf("RecheckAfter %s, want %s", d.RecheckAfter, tc.recheck)
			}
			if c != nil && poolcondition.IsTrue(&d.Status, mcfgv1.MachineConfigPoolDegraded) {
				t.Error("a stalled node made the pool Degraded")
			}
		})
	}
}

// Once a pool has stalled, the condition stays, False, when the node moves on.
func TestStalledConditionClears(t *testing.T) {
	now := time.Unix(100000, 0)
	p := pool("worker", "new", maxUnavail(intstr.FromInt32(1)))
	d := Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "old", targetedAgo("new", now, time.Hour))}, Now: metav1.NewTime(now)})
	if !poolcondition.IsTrue(&d.Status, poolcondition.UpdateStalled) {
		t.Fatalf("not stalled: %+v", d.Status.Conditions)
	}
	p.Status = d.Status
	d = Decide(Input{Pool: p, Nodes: []*corev1.Node{node("a", "new", targetedAgo("new", now, time.Hour))}, Now: metav1.NewTime(now)})
	c := poolcondition.Get(&d.Status, poolcondition.UpdateStalled)
	if c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("after the node moved on: %+v, want False", c)
	}
}
