package clusteroperator

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/mco-dev/mco/internal/operatorstatus"
	"github.com/mco-dev/mco/internal/protocol"
)

// Options configure the ClusterOperator controller.
type Options struct {
	// Namespace is where mco runs, the first of relatedObjects (must-gather collects it).
	Namespace string
	// Version is reported as the operator version (status.versions "operator").
	Version string
	// ControllerVersion is what the render controller stamps on rendered configs
	// (generated-by-controller-version); the manager sets it from the render controller's, as
	// the upgrade rule compares the two.
	ControllerVersion string
}

// Reconciler keeps the one ClusterOperator.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

var request = reconcile.Request{NamespacedName: client.ObjectKey{Name: operatorstatus.Name}}

// SetupWithManager watches everything the status is computed from; every event maps to the
// one ClusterOperator. Call it only where Served says the kind exists.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toOperator := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{request}
	})
	named := func(name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == name })
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusteroperator").
		For(&configv1.ClusterOperator{}, builder.WithPredicates(named(operatorstatus.Name))).
		Watches(&mcfgv1.MachineConfigPool{}, toOperator).
		// The render controller stamps its version on a rendered config that already exists.
		Watches(&mcfgv1.MachineConfig{}, toOperator, builder.WithPredicates(controllerVersionChanged{})).
		Watches(&operatorv1.MachineConfiguration{}, toOperator, builder.WithPredicates(named(protocol.ClusterMachineConfiguration))).
		Watches(&mcfgv1.KubeletConfig{}, toOperator).
		Watches(&mcfgv1.ContainerRuntimeConfig{}, toOperator).
		// Once at start: with no ClusterOperator and nothing else, no event would create it.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(request)
			return nil
		})).
		Complete(r)
}

// controllerVersionChanged passes MachineConfigs whose generated-by-controller-version the
// upgrade rule may read: created or re-stamped. Admins' edits of other configs reach the pools
// first, whose changes are watched.
type controllerVersionChanged struct{ predicate.Funcs }

func (controllerVersionChanged) Create(e event.CreateEvent) bool {
	_, ok := e.Object.GetAnnotations()[protocol.GeneratedByControllerVersionAnnotation]
	return ok
}

func (controllerVersionChanged) Update(e event.UpdateEvent) bool {
	key := protocol.GeneratedByControllerVersionAnnotation
	return e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key]
}

// Reconcile creates the ClusterOperator when absent and writes its status when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	co := &configv1.ClusterOperator{}
	if err := r.Client.Get(ctx, request.NamespacedName, co); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		co = &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: operatorstatus.Name}}
		if err := r.Client.Create(ctx, co); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return reconcile.Result{}, nil // the cache is behind; its create event brings us back
			}
			return reconcile.Result{}, fmt.Errorf("creating ClusterOperator %s: %w", operatorstatus.Name, err)
		}
	}
	in, err := r.inputs(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	res := operatorstatus.Compute(co.Status, in)
	if !res.Changed {
		return reconcile.Result{}, nil
	}
	co.Status = res.Status
	if err := r.Client.Status().Update(ctx, co); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{}, nil // someone wrote it since; that update event brings us back
		}
		return reconcile.Result{}, fmt.Errorf("updating ClusterOperator %s status: %w", operatorstatus.Name, err)
	}
	for _, e := range res.Events {
		kind := corev1.EventTypeNormal
		if e.Warning {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Event(co, kind, e.Reason, e.Message)
	}
	return reconcile.Result{}, nil
}

// inputs reads what the status is computed from, all from the cache.
func (r *Reconciler) inputs(ctx context.Context) (operatorstatus.Inputs, error) {
	in := operatorstatus.Inputs{
		Version: r.Options.Version, ControllerVersion: r.Options.ControllerVersion, Namespace: r.Options.Namespace,
		ConfigVersions: map[string]string{}, Now: metav1.Now(),
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		return in, err
	}
	in.Pools = pools.Items
	for _, name := range operatorstatus.ConfigNames(in.Pools) {
		var mc mcfgv1.MachineConfig
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &mc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return in, err
		}
		in.ConfigVersions[name] = mc.Annotations[protocol.GeneratedByControllerVersionAnnotation]
	}
	mc := &operatorv1.MachineConfiguration{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, mc); err == nil {
		in.MachineConfiguration = mc
	} else if !apierrors.IsNotFound(err) {
		return in, err
	}
	var kcs mcfgv1.KubeletConfigList
	if err := r.Client.List(ctx, &kcs); err != nil {
		return in, err
	}
	in.KubeletConfigs = kcs.Items
	var crcs mcfgv1.ContainerRuntimeConfigList
	if err := r.Client.List(ctx, &crcs); err != nil {
		return in, err
	}
	in.ContainerRuntimeConfigs = crcs.Items
	return in, nil
}
