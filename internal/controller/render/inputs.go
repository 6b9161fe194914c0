package render

import (
	"context"
	"maps"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// inputEvents enqueues the pools pools names for every event, as EnqueueRequestsFromMapFunc
// does (an update maps both the old and the new object, so a pool an object leaves is rendered
// too), and dates an input change of those pools when changed says the event alters what a
// render reads (see settle.go). old is nil for a creation, cur for a deletion.
func (r *Reconciler) inputEvents(pools handler.MapFunc, changed func(old, cur client.Object) bool) handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], change bool, objs ...client.Object) {
		now := time.Now()
		for _, obj := range objs {
			for _, req := range pools(ctx, obj) {
				if change {
					r.bursts.changed(req.Name, now)
				}
				q.Add(req)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, changed(nil, e.Object), e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, changed(e.ObjectOld, e.ObjectNew), e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, changed(e.Object, nil), e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, false, e.Object)
		},
	}
}

// machineConfigChanged: a MachineConfig was created or deleted, or its labels (which pools
// select it) or spec changed. Rendered configs are this controller's own output, never an
// input: writing one must not hold the next render.
func machineConfigChanged(old, cur client.Object) bool {
	obj := cur
	if obj == nil {
		obj = old
	}
	if owner := metav1.GetControllerOf(obj); owner != nil && owner.Kind == "MachineConfigPool" {
		return false
	}
	if old == nil || cur == nil {
		return true
	}
	o, okOld := old.(*mcfgv1.MachineConfig)
	c, okCur := cur.(*mcfgv1.MachineConfig)
	if !okOld || !okCur {
		return true
	}
	return !maps.Equal(o.Labels, c.Labels) || !equality.Semantic.DeepEqual(o.Spec, c.Spec)
}

// generatorChanged: a KubeletConfig or ContainerRuntimeConfig was created, deleted, or its spec
// changed (its generation moved) or its deletion began. Its status (observedGeneration, the
// generator controller's report) is no change: it only releases the generator gate.
func generatorChanged(old, cur client.Object) bool {
	if old == nil || cur == nil {
		return true
	}
	return old.GetGeneration() != cur.GetGeneration() ||
		(old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil)
}
