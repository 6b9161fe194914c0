// Package pinnedimageset is the PinnedImageSet controller, per pool: it writes the pool's
// spec.pinnedImageSets from the sets whose labels its machineConfigSelector matches (as
// OpenShift's pinned image set controller does), and reports the pool's side of them:
// status.poolSynchronizersStatus (type PinnedImageSets: how many of the pool's nodes hold every
// set) and the PinnedImageSetsDegraded condition, which names each node that could not pull or
// pin a set, with the image and why. The decisions are internal/pinnedimages'; the node agents
// pull and pin (internal/daemon/imagepin).
package pinnedimageset

import (
	"context"
	"fmt"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/controller/statuspatch"
	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/poolcondition"
)

// ReasonReplaced is the pool's event when the controller drops entries of spec.pinnedImageSets
// that no set's labels put there (written by hand).
const ReasonReplaced = "PinnedImageSetsReplaced"

// Reconciler reconciles one pool per request.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// SetupWithManager watches pools, sets (any change may move a set between pools) and
// MachineConfigNodes (a node's report of its sets).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := enqueue.All(r.Client, &mcfgv1.MachineConfigPoolList{}, "pools")
	return ctrl.NewControllerManagedBy(mgr).
		Named("pinnedimageset").
		For(&mcfgv1.MachineConfigPool{}).
		Watches(&mcfgv1.PinnedImageSet{}, handler.EnqueueRequestsFromMapFunc(all)).
		Watches(&mcfgv1.MachineConfigNode{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			m := o.(*mcfgv1.MachineConfigNode)
			if m.Spec.Pool.Name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: m.Spec.Pool.Name}}}
		}), builder.WithPredicates(pinnedReportChanged)).
		Complete(r)
}

// pinnedReportChanged passes a MachineConfigNode's creation and deletion, and an update that
// moves it to another pool or changes its pinned image sets' report: the agent writes the rest
// of its status at every step of every update, which this controller does not read (the cache
// keeps only this part: machineconfignode.CacheByObject).
var pinnedReportChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*mcfgv1.MachineConfigNode), e.ObjectNew.(*mcfgv1.MachineConfigNode)
		return o.Spec.Pool != n.Spec.Pool || !equality.Semantic.DeepEqual(o.Status.PinnedImageSets, n.Status.PinnedImageSets) ||
			!equality.Semantic.DeepEqual(pinnedimages.OwnConditions(o.Status.Conditions), pinnedimages.OwnConditions(n.Status.Conditions))
	},
}

// Reconcile writes one pool's sets and their status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var sets mcfgv1.PinnedImageSetList
	if err := r.Client.List(ctx, &sets); err != nil {
		return reconcile.Result{}, err
	}
	populateErr := r.populate(ctx, pool, sets.Items)
	var mcns mcfgv1.MachineConfigNodeList
	if err := r.Client.List(ctx, &mcns); err != nil {
		return reconcile.Result{}, err
	}
	var mine []mcfgv1.MachineConfigNode
	for _, m := range mcns.Items {
		if m.Spec.Pool.Name == pool.Name {
			mine = append(mine, m)
		}
	}
	wanted := pinnedimages.Wanted([]*mcfgv1.MachineConfigPool{pool}, sets.Items)
	st := pool.Status.DeepCopy()
	st.PoolSynchronizersStatus = []mcfgv1.PoolSynchronizerStatus{pinnedimages.Synchronizer(pool, mine, wanted)}
	status, reason, msg := pinnedimages.Degraded(mine, populateErr)
	poolcondition.Set(st, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded, corev1.ConditionStatus(status), reason, msg, metav1.NewTime(time.Now().Truncate(time.Second)))
	if equality.Semantic.DeepEqual(*st, pool.Status) {
		return reconcile.Result{}, populateErr
	}
	before := pool.DeepCopy()
	pool.Status = *st
	if err := r.Client.Status().Patch(ctx, pool, statuspatch.MergeFrom(before)); err != nil {
		return reconcile.Result{}, fmt.Errorf("pool %s status: %w", pool.Name, err)
	}
	return reconcile.Result{}, populateErr
}

// populate writes the pool's spec.pinnedImageSets; the error is one the pool's condition reports.
func (r *Reconciler) populate(ctx context.Context, pool *mcfgv1.MachineConfigPool, sets []mcfgv1.PinnedImageSet) error {
	refs, keep, err := pinnedimages.RefsForPool(pool, sets)
	if err != nil {
		return fmt.Errorf("Failed to populate pinned image sets for pool %s: %w", pool.Name, err)
	}
	if !keep || equality.Semantic.DeepEqual(refs, pool.Spec.PinnedImageSets) {
		return nil
	}
	removed := pinnedimages.Removed(pool.Spec.PinnedImageSets, refs)
	before := pool.DeepCopy()
	pool.Spec.PinnedImageSets = refs
	if err := r.Client.Patch(ctx, pool, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		*pool = *before
		return fmt.Errorf("Failed to populate pinned image sets for pool %s: %w", pool.Name, err)
	}
	if len(removed) > 0 {
		r.Recorder.Eventf(pool, corev1.EventTypeWarning, ReasonReplaced,
			"spec.pinnedImageSets named %s, which no PinnedImageSet's labels match spec.machineConfigSelector for; a pool's sets are those whose labels its machineConfigSelector matches (label the set, e.g. machineconfiguration.openshift.io/role: %s)",
			strings.Join(removed, ", "), pool.Name)
	}
	return nil
}
