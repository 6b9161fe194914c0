package node

import (
	"context"
	"maps"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/pacing"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// nodeHandler enqueues the pools whose nodeSelector matches a node before or after a change,
// so the pool a node leaves is recounted as well as the one it joins, and the custom pool a
// node first booted into while it does not carry that pool's labels yet (a kubelet need not
// give it any label a pool selects). Each pool is woken no sooner than its decisions' spacing
// allows (decisions.wake).
func (r *Reconciler) nodeHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], nodes ...client.Object) {
		now := time.Now()
		var pools mcfgv1.MachineConfigPoolList
		// Read only, like the rest of the event handler: no copy of every pool per Node event.
		if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing pools for a node event")
			return
		}
		booted := map[string]bool{}
		for _, obj := range nodes {
			if n, ok := obj.(*corev1.Node); ok {
				if rendered, pending := rollout.FirstBootPending(n); pending {
					booted[r.bootedPool(ctx, rendered)] = true
				}
			}
		}
		for i := range pools.Items {
			if booted[pools.Items[i].Name] {
				r.decisions.wake(q, pools.Items[i].Name, now)
				continue
			}
			for _, obj := range nodes {
				if n, ok := obj.(*corev1.Node); ok && rollout.Selects(&pools.Items[i], n) {
					r.decisions.wake(q, pools.Items[i].Name, now)
					break
				}
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// relevantNodeChange drops node updates that cannot change a decision or a count: kubelet
// heartbeats, image lists, resource versions of unrelated annotations.
var relevantNodeChange = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*corev1.Node)
		cur, okNew := e.ObjectNew.(*corev1.Node)
		if !okOld || !okNew {
			return true
		}
		return !maps.Equal(old.Labels, cur.Labels) ||
			watchedAnnotationChanged(old, cur) ||
			old.Spec.Unschedulable != cur.Spec.Unschedulable ||
			!equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
			rollout.Healthy(old) != rollout.Healthy(cur) // with the cordon above, Ready too
	},
}

// watchedAnnotations are the annotations the decision and the status read.
var watchedAnnotations = []string{
	protocol.CurrentConfigAnnotation,
	protocol.DesiredConfigAnnotation,
	protocol.StateAnnotation,
	protocol.ReasonAnnotation,
	protocol.DrainBlockedAnnotation,
	// A failed node cordoned for its update may be retargeted; a queued reboot is an update.
	protocol.DesiredDrainAnnotation,
	protocol.LastAppliedDrainAnnotation,
	protocol.DrainStartedAtAnnotation,
	protocol.PostConfigActionAnnotation,
	// spec.drain: a drain becoming blocked starts the clock of its skip; a skip is chosen last.
	protocol.DrainBlockedSinceAnnotation,
	rolloutv1.DrainSkippedAnnotation,
	rolloutv1.DrainBlockedForAnnotation,
	// A node that first booted into a custom pool is labelled for it until it is settled.
	protocol.FirstPivotConfigAnnotation,
	protocol.CustomPoolLabelsAppliedAnnotation,
	// A node mco did not boot is offered its pool's target, reports what adopting it would do,
	// and is approved by the admin.
	protocol.AdoptionTargetAnnotation,
	protocol.AdoptionAnnotation,
	protocol.AdoptionPlanAnnotation,
	protocol.AdoptAnnotation,
	// An admin holds a node back or orders the pool's nodes (`mco hold`, update-priority).
	rolloutv1.HoldAnnotation,
	rolloutv1.UpdatePriorityAnnotation,
}

// watchedAnnotationChanged reports whether one of the watchedAnnotations appeared, went or
// changed value. It compares in place: the predicate sees every Node update of the cluster.
func watchedAnnotationChanged(old, cur *corev1.Node) bool {
	for _, k := range watchedAnnotations {
		o, inOld := old.Annotations[k]
		c, inCur := cur.Annotations[k]
		if inOld != inCur || o != c {
			return true
		}
	}
	return false
}

// podHandler enqueues the paced pools selecting a DaemonSet pod's node: its readiness is the
// pacing health gate's, and pools no policy selects have no gate (DaemonSet pods flip
// readiness on every node reboot, so waking those pools would be work for nothing).
func (r *Reconciler) podHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(r.pacedPoolsOfPod)
}

func (r *Reconciler) pacedPoolsOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	var n corev1.Node
	if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, &n); err != nil {
		return nil
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing pools for a pod event")
		return nil
	}
	var policies rolloutv1.MachineConfigPoolRolloutList
	if err := r.Client.List(ctx, &policies); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing MachineConfigPoolRollouts for a pod event")
		return nil
	}
	var reqs []reconcile.Request
	for i := range pools.Items {
		if rollout.Selects(&pools.Items[i], &n) && len(pacing.Selecting(policies.Items, &pools.Items[i])) > 0 {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: pools.Items[i].Name}})
		}
	}
	return reqs
}

// daemonSetPodReadiness passes DaemonSet pods appearing, going, or changing readiness or node.
var daemonSetPodReadiness = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return isDaemonSetPod(e.Object) },
	DeleteFunc: func(e event.DeleteEvent) bool { return isDaemonSetPod(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*corev1.Pod)
		cur, okNew := e.ObjectNew.(*corev1.Pod)
		if !okOld || !okNew || !isDaemonSetPod(cur) {
			return false
		}
		return pacing.PodReady(old) != pacing.PodReady(cur) || old.Spec.NodeName != cur.Spec.NodeName ||
			(old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func isDaemonSetPod(obj client.Object) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
