package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
)

// ReasonDrainDeletedPod is the Warning event on a Node for each pod deleted because its eviction
// stayed refused past spec.drain.deleteBlockingPodsAfter.
const ReasonDrainDeletedPod = "DrainDeletedPod"

// trackBlocked keeps the node's blocked-drain bookkeeping (drainpolicy.Blocked): a stint starts
// on the first pass whose eviction is refused and ends, added to drain-blocked-seconds, on the
// first pass without one. Passes in between write nothing.
func (r *Reconciler) trackBlocked(ctx context.Context, node *corev1.Node, refused bool, now time.Time) error {
	b := drainpolicy.Read(node)
	switch {
	case refused && !b.Now():
		return r.patch(ctx, node, func(n *corev1.Node) {
			n.Annotations[protocol.DrainBlockedSinceAnnotation] = now.UTC().Format(time.RFC3339)
		}, false)
	case !refused && b.Now():
		return r.patch(ctx, node, func(n *corev1.Node) { endStint(n, now) }, false)
	}
	return nil
}

// endStint adds a running blocked stint to the node's drain-blocked-seconds.
func endStint(n *corev1.Node, now time.Time) {
	if b := drainpolicy.Read(n); b.Now() {
		n.Annotations[rolloutv1.DrainBlockedForAnnotation] = b.Seconds(now)
	}
	delete(n.Annotations, protocol.DrainBlockedSinceAnnotation)
}

// deleteRefused deletes the pods whose eviction was refused, once the node's drain has been
// blocked past spec.drain.deleteBlockingPodsAfter: a plain delete with the pod's own grace
// period, only of the pod the eviction pass saw (its UID), and only while the Node, read past
// the cache, still asks for this drain (a request withdrawn meanwhile, as a skip does, deletes
// nothing). Pods the drain leaves on the node (DaemonSet and mirror pods) are never among the
// refused ones: the eviction pass does not ask for them.
func (r *Reconciler) deleteRefused(ctx context.Context, node *corev1.Node, wanted string, obstacles []Obstacle, p nodePolicy, blocked time.Duration) error {
	fresh, err := r.Kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s before deleting its blocking pods: %w", node.Name, err)
	}
	if fresh.Annotations[protocol.DesiredDrainAnnotation] != wanted || fresh.Annotations[protocol.LastAppliedDrainAnnotation] == wanted {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for _, o := range obstacles {
		if !o.Refused {
			continue
		}
		ns, name, _ := strings.Cut(o.Pod, "/")
		uid := o.uid
		err := r.Kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			continue // gone, or replaced by another pod of that name: the next pass looks again
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting pod %s: %w", o.Pod, err))
			continue
		}
		budgets := strings.Join(o.Budgets, ", ")
		if budgets == "" {
			budgets = "(not found)"
		}
		log.Info("deleted a pod whose eviction was refused: the drain was blocked past spec.drain.deleteBlockingPodsAfter",
			"node", node.Name, "pod", o.Pod, "podDisruptionBudget", budgets, "blocked", blocked.Round(time.Second).String(), "policy", p.from)
		r.Recorder.Eventf(node, corev1.EventTypeWarning, ReasonDrainDeletedPod,
			"Deleted pod %s, bypassing PodDisruptionBudget %s: the drain for %s was blocked for %s in all (spec.drain.deleteBlockingPodsAfter %s of mcprollout/%s)",
			o.Pod, budgets, wanted, blocked.Round(time.Second), p.DeleteAfter, p.from)
	}
	return errors.Join(errs...)
}
