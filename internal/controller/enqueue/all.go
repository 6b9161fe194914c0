// Package enqueue holds the watch mappings controllers share.
package enqueue

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// All enqueues every object of list's kind, cluster-scoped, whatever the event: for a watched
// object (a pool, a cluster-wide input) that can change any of them. A list that fails is
// logged, naming plural, and enqueues nothing: the watch's next event or the resync retries.
// opts are passed to the List (client.UnsafeDisableDeepCopy for a cached list read only for
// names).
func All(c client.Reader, list client.ObjectList, plural string, opts ...client.ListOption) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		objs := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, objs, opts...); err != nil {
			log.FromContext(ctx).Error(err, "listing "+plural)
			return nil
		}
		reqs := make([]reconcile.Request, 0, meta.LenList(objs))
		_ = meta.EachListItem(objs, func(o runtime.Object) error {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: o.(client.Object).GetName()}})
			return nil
		})
		return reqs
	}
}
