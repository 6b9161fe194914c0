package unpauseplan

import (
	"context"
	"maps"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// SetupWithManager registers the controller. A pool is looked at when its spec changes (paused,
// configuration, nodeSelector; its status, written by the node controller on every count,
// does not matter here), and every pool that is paused or carries the condition when a node's
// labels or current config change, a node comes or goes, a rendered config is created or
// deleted, or MachineConfiguration cluster's spec changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toPools := handler.EnqueueRequestsFromMapFunc(r.concernedPools)
	return ctrl.NewControllerManagedBy(mgr).
		Named("unpauseplan").
		For(&mcfgv1.MachineConfigPool{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, toPools, builder.WithPredicates(nodeMoved)).
		Watches(&mcfgv1.MachineConfig{}, toPools, builder.WithPredicates(createdOrDeleted)).
		Watches(&operatorv1.MachineConfiguration{}, toPools, builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == protocol.ClusterMachineConfiguration }),
			predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// concernedPools are the pools whose condition an event may change: the paused ones, and those
// still carrying it (to turn it False).
func (r *Reconciler) concernedPools(ctx context.Context, _ client.Object) []reconcile.Request {
	var pools mcfgv1.MachineConfigPoolList
	// Read only: no copy of every pool for each node event of a rollout.
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing pools")
		return nil
	}
	var reqs []reconcile.Request
	for i := range pools.Items {
		p := &pools.Items[i]
		if p.Spec.Paused || poolcondition.IsTrue(&p.Status, poolcondition.PendingUpdate) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: p.Name}})
		}
	}
	return reqs
}

// nodeMoved passes node updates that change which config a node runs or which pool it is in;
// heartbeats and the rest of the update protocol do not change what unpausing would do.
var nodeMoved = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld, e.ObjectNew
		return old.GetAnnotations()[protocol.CurrentConfigAnnotation] != cur.GetAnnotations()[protocol.CurrentConfigAnnotation] ||
			!maps.Equal(old.GetLabels(), cur.GetLabels())
	},
}

// createdOrDeleted passes rendered configs appearing or going: a group planned while its config
// was missing from the cache is planned again. Rendered configs are not edited.
var createdOrDeleted = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
