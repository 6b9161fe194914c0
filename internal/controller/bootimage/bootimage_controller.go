package bootimage

import (
	"context"
	"errors"
	"fmt"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

// Event reasons.
const (
	ReasonIgnoredConfiguration = "IgnoredMachineConfiguration"
	ReasonBootImageUpdated     = "BootImageUpdated"
	ReasonHotLoop              = "BootImageHotLoop"
	ReasonStubUpgraded         = "StubIgnitionUpgraded"
)

// degradedRetry re-checks a degraded cluster now and then: a missing user-data Secret or a
// fixed ConfigMap produces no event this controller watches.
const degradedRetry = 10 * time.Minute

// Reconciler reconciles every enrolled MachineSet on each pass.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

var clusterRequest = []reconcile.Request{{NamespacedName: client.ObjectKey{Name: protocol.ClusterMachineConfiguration}}}

// SetupWithManager watches MachineConfigurations (spec changes), the coreos-bootimages
// ConfigMap and the MachineSets of the Machine API namespace; all map to "cluster".
// A cluster without the Machine API (no MachineSet CRD) has nothing to manage: the controller
// is then not started rather than failing the whole manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	served, err := scheme.Serves(mgr.GetRESTMapper(), machinev1beta1.GroupVersion.WithKind("MachineSet"))
	if err != nil {
		return fmt.Errorf("asking whether the cluster serves MachineSets: %w", err)
	}
	if !served {
		mgr.GetLogger().Info("MachineSets are not served by this cluster; boot image controller not started")
		return nil
	}
	toCluster := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return clusterRequest })
	isBootImages := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Options.BootImagesNamespace && o.GetName() == bootimage.BootImagesConfigMap
	})
	inMachineAPI := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Options.MachineAPINamespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("bootimage").
		For(&operatorv1.MachineConfiguration{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, toCluster, builder.WithPredicates(isBootImages)).
		Watches(&machinev1beta1.MachineSet{}, toCluster, builder.WithPredicates(inMachineAPI, machineSetChanged{})).
		Complete(r)
}

// machineSetChanged ignores status-only updates (replica counts change all the time); what the
// decision reads is the spec, labels, annotations and ownerReferences.
type machineSetChanged struct{ predicate.Funcs }

func (machineSetChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld, e.ObjectNew
	return o.GetGeneration() != n.GetGeneration() ||
		!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
		!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences())
}

// Reconcile runs one pass. The status and the patch history are written whatever the pass
// did, so an admin sees partial progress and the guard never forgets a patch it allowed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &operatorv1.MachineConfiguration{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		if apierrors.IsNotFound(err) && req.Name == protocol.ClusterMachineConfiguration {
			degradedGauge.Set(0) // nothing configured, nothing degraded
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if mc.Name != protocol.ClusterMachineConfiguration {
		r.Recorder.Eventf(mc, corev1.EventTypeWarning, ReasonIgnoredConfiguration,
			"Only MachineConfiguration %q configures mco; %q is ignored", protocol.ClusterMachineConfiguration, mc.Name)
		return reconcile.Result{}, nil
	}
	history, err := r.loadHistory(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	pass, retry := r.sync(ctx, mc, history)
	err = errors.Join(retry, r.saveHistory(ctx, history), r.writeStatus(ctx, mc, pass))
	if err == nil && pass.Degraded() {
		return reconcile.Result{RequeueAfter: degradedRetry}, nil
	}
	return reconcile.Result{}, err
}

// sync reconciles the enrolled MachineSets. retry collects API errors worth a backoff retry;
// everything an admin must act on is in the returned Pass.
func (r *Reconciler) sync(ctx context.Context, mc *operatorv1.MachineConfiguration, history bootimage.PatchHistory) (pass bootimage.Pass, retry error) {
	enrollment, err := bootimage.MachineSetEnrollment(bootimage.EffectiveMachineManagers(mc.Spec.ManagedBootImages))
	if err != nil {
		return bootimage.Pass{SourceErr: err}, nil
	}
	var list machinev1beta1.MachineSetList
	if err := r.Client.List(ctx, &list, client.InNamespace(r.Options.MachineAPINamespace)); err != nil {
		return bootimage.Pass{SourceErr: err}, err
	}
	var enrolled []*machinev1beta1.MachineSet
	names := map[string]bool{}
	for i := range list.Items {
		if ms := &list.Items[i]; enrollment.Enrolls(ms.Labels) {
			enrolled = append(enrolled, ms)
			names[ms.Name] = true
		}
	}
	history.Retain(func(name string) bool { return names[name] })
	switch {
	case enrollment.Mode == operatorv1.None:
		return bootimage.Pass{Disabled: true}, nil
	case len(enrolled) == 0:
		// A cluster without MachineSets (the dev cluster, bare metal) needs no boot images and
		// must not report Degraded for lack of them.
		return bootimage.Pass{}, nil
	}
	st, err := r.loadStream(ctx)
	if err != nil {
		return bootimage.Pass{SourceErr: err}, nil
	}
	pass.Tally.Enrolled = len(enrolled)
	for _, ms := range enrolled {
		retry = errors.Join(retry, r.reconcileMachineSet(ctx, ms, st, history, &pass.Tally))
	}
	return pass, retry
}
