package drain

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// A blocked drain withdrawn for the uncordon the node already had acknowledged (a node whose
// drain is skipped a second time for the same target) is uncordoned again, and the time it was
// blocked is kept in drain-blocked-seconds, adding to what an earlier attempt left.
func TestWithdrawnBlockedDrainUncordonsAgainAndKeepsBlockedTime(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "drain-withdrawn"
	node := newNode(t, ctx, "drain-withdrawn", map[string]string{
		protocol.DesiredDrainAnnotation:     protocol.UncordonRequest("rendered-a"),
		protocol.LastAppliedDrainAnnotation: protocol.UncordonRequest("rendered-a"),
		rolloutv1.DrainBlockedForAnnotation: "30",
	})
	namespace(t, ctx, ns)
	runningPod(t, ctx, ns, "db-0", node.Name, map[string]string{"app": "db"}, nil)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db-pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptrTo(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	create(t, ctx, pdb)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DesiredHealthy: 1, ExpectedPods: 1}
	if err := k8sClient.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}

	request(t, ctx, node.Name, protocol.DrainRequest("rendered-b"))
	n := waitNode(t, ctx, node.Name, "a blocked stint", func(n *corev1.Node) bool {
		return n.Spec.Unschedulable && n.Annotations[protocol.DrainBlockedSinceAnnotation] != ""
	})
	since := mustParse(t, n.Annotations[protocol.DrainBlockedSinceAnnotation])
	time.Sleep(2 * time.Second) // a stint long enough to be seen in whole seconds
	withdrawn := time.Now()
	request(t, ctx, node.Name, protocol.UncordonRequest("rendered-a"))
	n = waitNode(t, ctx, node.Name, "uncordoned again", func(n *corev1.Node) bool {
		return !n.Spec.Unschedulable && n.Annotations[protocol.DrainStartedAtAnnotation] == ""
	})
	if _, ok := n.Annotations[protocol.DrainBlockedSinceAnnotation]; ok {
		t.Error("drain-blocked-since left after the uncordon")
	}
	// The stint ended when the controller saw the withdrawal: after the request, before this
	// read, however long the two are apart on a loaded machine; the annotation rounds it to
	// whole seconds.
	b := drainpolicy.Read(n)
	low, high := 30*time.Second+withdrawn.Sub(since)-time.Second, 30*time.Second+time.Since(since)+time.Second
	if b.Before < low || b.Before > high {
		t.Errorf("drain-blocked-seconds = %q, want 30 plus the stint, between %s and %s", n.Annotations[rolloutv1.DrainBlockedForAnnotation], low.Round(time.Second), high.Round(time.Second))
	}
}
