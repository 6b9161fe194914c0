package node

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// spec.drain with the real API server refusing the eviction (a PodDisruptionBudget): the first
// node's drain is skipped after blockedTimeout, the other nodes update meanwhile (never more
// than maxUnavailable at once), then the skipped node is tried again and, once its drain has
// been blocked deleteBlockingPodsAfter in all, the refused pod is deleted and the node updates.
func TestBlockedDrainSkipsThenDeletes(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role, ns, oldCfg, newCfg = "dskip", "dskip-app", "rendered-dskip-old", "rendered-dskip-new"
	nodes := pacedPool(t, ctx, role, 3, 1, oldCfg)
	pod, _ := budgetedPod(t, ctx, ns, "db", nodes[0])
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.Drain = &rolloutv1.DrainPolicy{
			BlockedTimeout:          &metav1.Duration{Duration: 2 * time.Second},
			OnBlocked:               rolloutv1.DrainSkip,
			DeleteBlockingPodsAfter: &metav1.Duration{Duration: 6 * time.Second},
		}
	})
	// As after an earlier update: the uncordon the skip will ask for again is the one already
	// acknowledged, so only drain-started-at tells the drain controller to carry it out again.
	n0 := getNode(t, ctx, nodes[0])
	patch := client.MergeFrom(n0.DeepCopy())
	n0.Annotations[protocol.DesiredDrainAnnotation] = protocol.UncordonRequest(oldCfg)
	n0.Annotations[protocol.LastAppliedDrainAnnotation] = protocol.UncordonRequest(oldCfg)
	if err := k8sClient.Patch(ctx, n0, patch); err != nil {
		t.Fatal(err)
	}
	uw := watchUnavailable(t, ctx, role)

	setTarget(t, ctx, role, newCfg)
	skipped := waitForNode(t, ctx, nodes[0], "its blocked drain skipped", func(n *corev1.Node) bool {
		return drainpolicy.SkippedFor(n, newCfg) && n.Annotations[protocol.DesiredConfigAnnotation] == oldCfg
	})
	rec, _ := drainpolicy.Skipped(skipped)
	if rec.Blocking == "" {
		t.Errorf("the skip does not say what blocked the drain: %+v", rec)
	}
	waitNodeEvent(t, ctx, nodes[0], ReasonDrainSkipped, "spec.drain.blockedTimeout")
	// Uncordoned and Done on its old config, with its blocked time kept.
	back := waitForNode(t, ctx, nodes[0], "uncordoned on its old config", func(n *corev1.Node) bool {
		return !n.Spec.Unschedulable && n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) &&
			n.Annotations[protocol.LastAppliedDrainAnnotation] == protocol.UncordonRequest(oldCfg)
	})
	if b := drainpolicy.Read(back); b.Now() || b.Before < 2*time.Second {
		t.Errorf("after the skip: blocked bookkeeping %+v, want about 2s kept and no running stint", b)
	}

	// The others go first; the skipped node only after both are on the target.
	for _, name := range nodes[1:] {
		waitForNode(t, ctx, name, "updated", func(n *corev1.Node) bool {
			return n.Annotations[protocol.CurrentConfigAnnotation] == newCfg && n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone)
		})
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
		t.Fatalf("the pod was deleted before the skipped node's second attempt: %v", err)
	}

	// Tried again: blocked on, past deleteBlockingPodsAfter in all, the pod is deleted.
	waitNodeEvent(t, ctx, nodes[0], "DrainDeletedPod", "PodDisruptionBudget dskip-app/db-pdb")
	waitPool(t, ctx, role, "every node on the target", 30*time.Second, updatedTo(newCfg, 3))
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the blocking pod still exists: %v", err)
	}
	done := waitForNode(t, ctx, nodes[0], "its drain bookkeeping cleared", func(n *corev1.Node) bool {
		_, a := n.Annotations[rolloutv1.DrainSkippedAnnotation]
		_, b := n.Annotations[rolloutv1.DrainBlockedForAnnotation]
		_, c := n.Annotations[protocol.DrainBlockedSinceAnnotation]
		return !a && !b && !c
	})
	if done.Annotations[protocol.CurrentConfigAnnotation] != newCfg {
		t.Errorf("node %s is on %q", nodes[0], done.Annotations[protocol.CurrentConfigAnnotation])
	}
	if most, _ := uw.max(); most > 1 {
		t.Errorf("%d nodes were unavailable at once, maxUnavailable is 1", most)
	}
}

func waitForNode(t *testing.T, ctx context.Context, name, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		n := &corev1.Node{}
		err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, n)
		if err == nil && cond(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: timed out waiting for %s: %v %v", name, what, err, n.Annotations)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
