package pacing

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/pacing"
)

// ConditionValid is True when the policy's spec compiles.
const ConditionValid = "Valid"

// Reconciler keeps one policy's Valid condition and prunes its entries.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager watches policies (spec changes) and pools (created, deleted, relabelled:
// what a policy selects).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("pacing").
		For(&rolloutv1.MachineConfigPoolRollout{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, &rolloutv1.MachineConfigPoolRolloutList{}, "MachineConfigPoolRollouts")), builder.WithPredicates(poolMembership)).
		Complete(r)
}

// Reconcile compiles the spec and drops entries of pools the policy no longer paces.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	policy := &rolloutv1.MachineConfigPoolRollout{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		return reconcile.Result{}, err
	}
	paced := map[string]bool{}
	for i := range pools.Items {
		if len(pacing.Selecting([]rolloutv1.MachineConfigPoolRollout{*policy}, &pools.Items[i])) == 1 {
			paced[pools.Items[i].Name] = true
		}
	}
	updated := policy.DeepCopy()
	pacing.SetPool(&updated.Status, nil, func(pool string) bool { return paced[pool] })
	valid := metav1.Condition{Type: ConditionValid, Status: metav1.ConditionTrue, Reason: "Compiled",
		Message: fmt.Sprintf("paces %d pools", len(paced)), ObservedGeneration: policy.Generation}
	if len(paced) == 1 {
		valid.Message = "paces 1 pool"
	}
	if _, err := pacing.Compile(policy.Spec); err != nil {
		valid.Status, valid.Reason, valid.Message = metav1.ConditionFalse, "InvalidSpec", err.Error()
	}
	meta.SetStatusCondition(&updated.Status.Conditions, valid)
	updated.Status.ObservedGeneration = policy.Generation
	if equality.Semantic.DeepEqual(policy.Status, updated.Status) {
		return reconcile.Result{}, nil
	}
	// A conflict with the node controller's entry write fails the reconcile and retries it.
	return reconcile.Result{}, r.Client.Status().Update(ctx, updated)
}

// poolMembership passes what can change which pools a policy selects.
var poolMembership = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return true },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	UpdateFunc:  predicate.LabelChangedPredicate{}.Update,
	GenericFunc: func(event.GenericEvent) bool { return false },
}
