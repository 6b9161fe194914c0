package containerruntime

import (
	"context"
	"errors"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/containerruntime"
	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/controller/generated"
)

// Event reasons, on the ContainerRuntimeConfig.
const (
	ReasonGenerated = generated.ReasonGenerated
	ReasonUpdated   = generated.ReasonUpdated
	ReasonDeleted   = generated.ReasonDeleted
	ReasonRefused   = "ContainerRuntimeConfigRefused"
)

// Options configure the controller.
type Options struct {
	// ControllerVersion is stamped on generated MachineConfigs (generated-by-controller-version).
	ControllerVersion string
}

// Reconciler syncs one ContainerRuntimeConfig per reconcile.
type Reconciler struct {
	Client client.Client
	// Reader reads ContainerRuntimeConfigs uncached for the name suffixes, so two new ones on a
	// pool never miss each other's annotation and take the same name.
	Reader   client.Reader
	Recorder record.EventRecorder
	Options  Options
}

// SetupWithManager watches ContainerRuntimeConfigs (spec, deletion, the suffix annotation),
// pools (what a selector matches, a new machineConfigSelector changes the base) and
// MachineConfigs (a generated one edited or deleted by hand is put back; one writing
// storage.conf may be a base).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := enqueue.All(r.Client, &mcfgv1.ContainerRuntimeConfigList{}, "ContainerRuntimeConfigs")
	return ctrl.NewControllerManagedBy(mgr).
		Named("containerruntimeconfig").
		For(&mcfgv1.ContainerRuntimeConfig{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(all), builder.WithPredicates(generated.PoolInputChanged())).
		Watches(&mcfgv1.MachineConfig{}, handler.EnqueueRequestsFromMapFunc(generated.EnqueueForMachineConfig(containerruntime.Kind, containerruntime.StorageConfPath, all))).
		Complete(r)
}

// Reconcile writes (or, for a deleted one, removes) one ContainerRuntimeConfig's
// MachineConfigs and reports the outcome in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cfg := &mcfgv1.ContainerRuntimeConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cfg.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.writer().Finalize(ctx, cfg)
	}
	cluster, err := r.cluster(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	desired, err := containerruntime.DesiredFor(cfg, cluster)
	if err != nil {
		// The admin's to fix: nothing is written and the previous MachineConfigs stay in
		// effect; an edit of the config, its pools or a base MachineConfig retries.
		return reconcile.Result{}, r.writeStatus(ctx, cfg, err)
	}
	w := r.writer()
	if err := w.EnsureMetadata(ctx, cfg, desired.Suffix, desired.MachineConfigs); err != nil {
		return reconcile.Result{}, err
	}
	if _, err := w.Apply(ctx, cfg, desired.MachineConfigs, cluster.MachineConfigs); err != nil {
		var taken *generated.NameTakenError
		if errors.As(err, &taken) {
			return reconcile.Result{}, r.writeStatus(ctx, cfg, taken)
		}
		return reconcile.Result{}, err
	}
	if err := w.Prune(ctx, cfg, desired.MachineConfigs, cluster.MachineConfigs); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.writeStatus(ctx, cfg, nil)
}

// cluster reads what the core needs besides the ContainerRuntimeConfig.
func (r *Reconciler) cluster(ctx context.Context) (containerruntime.Cluster, error) {
	var pools mcfgv1.MachineConfigPoolList
	var mcs mcfgv1.MachineConfigList
	var cfgs mcfgv1.ContainerRuntimeConfigList
	if err := r.Client.List(ctx, &pools); err != nil {
		return containerruntime.Cluster{}, err
	}
	if err := r.Client.List(ctx, &mcs); err != nil {
		return containerruntime.Cluster{}, err
	}
	if err := r.Reader.List(ctx, &cfgs); err != nil {
		return containerruntime.Cluster{}, err
	}
	c := containerruntime.Cluster{Pools: pools.Items, Configs: cfgs.Items, ControllerVersion: r.Options.ControllerVersion}
	for i := range mcs.Items {
		c.MachineConfigs = append(c.MachineConfigs, &mcs.Items[i])
	}
	return c, nil
}

// writeStatus records the sync's outcome as OpenShift does, only when it changed. A refusal is
// also a Warning event, once per new message.
func (r *Reconciler) writeStatus(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, syncErr error) error {
	st, changed := containerruntime.Status(cfg.Status, cfg.Generation, syncErr, metav1.NewTime(time.Now().Truncate(time.Second)))
	if !changed {
		return nil
	}
	if syncErr != nil {
		r.Recorder.Event(cfg, corev1.EventTypeWarning, ReasonRefused, syncErr.Error())
	}
	before := cfg.DeepCopy()
	cfg.Status = st
	return r.Client.Status().Patch(ctx, cfg, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
