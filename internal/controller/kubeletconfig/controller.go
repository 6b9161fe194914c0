package kubeletconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/controller/generated"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/render"
)

// Event reasons, on the KubeletConfig.
const (
	ReasonGenerated     = generated.ReasonGenerated
	ReasonUpdated       = generated.ReasonUpdated
	ReasonDeleted       = generated.ReasonDeleted
	ReasonRefused       = "KubeletConfigRefused"
	ReasonUnknownFields = "UnknownKubeletConfigFields"
)

// APIServerName is the one APIServer whose TLS profile the kubelet follows.
const APIServerName = "cluster"

// Options configure the controller.
type Options struct {
	// ControllerVersion is stamped on generated MachineConfigs (generated-by-controller-version).
	ControllerVersion string
	// ServesAPIServer: the cluster serves apiservers.config.openshift.io (OpenShift), whose
	// `cluster` TLS profile then goes into every generated kubelet.conf (the manager asks its
	// REST mapper at start).
	ServesAPIServer bool
}

// Reconciler syncs one KubeletConfig per reconcile.
type Reconciler struct {
	Client client.Client
	// Reader reads KubeletConfigs uncached for the name suffixes, so two new KubeletConfigs of
	// a pool never see each other without their annotations and take the same name.
	Reader   client.Reader
	Recorder record.EventRecorder
	Options  Options
	// Parses is the Ignition parse cache, the render controller's where the manager shares it
	// (both read every MachineConfig of a pool). Nil makes one of the controller's own.
	Parses *render.ParseCache
}

// CacheByObject limits the APIServer informer to `cluster`, the only one the kubelet follows,
// so the RBAC can name it.
func CacheByObject() (client.Object, cache.ByObject) {
	return &configv1.APIServer{}, cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", APIServerName)}
}

// SetupWithManager watches KubeletConfigs (spec, deletion, the suffix annotation), pools (a
// new or relabelled pool changes what a selector matches, a new machineConfigSelector the
// base), MachineConfigs (a base kubelet.conf changed; a generated one edited or deleted by
// hand is put back) and, where served, the APIServer `cluster`.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Parses == nil {
		r.Parses = render.NewParseCache(1024)
	}
	all := enqueue.All(r.Client, &mcfgv1.KubeletConfigList{}, "KubeletConfigs")
	b := ctrl.NewControllerManagedBy(mgr).
		Named("kubeletconfig").
		For(&mcfgv1.KubeletConfig{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(all), builder.WithPredicates(generated.PoolInputChanged())).
		Watches(&mcfgv1.MachineConfig{}, handler.EnqueueRequestsFromMapFunc(generated.EnqueueForMachineConfig(kubeletconfig.KubeletConfigKind, kubeletconfig.KubeletConfPath, all)))
	if r.Options.ServesAPIServer {
		b = b.Watches(&configv1.APIServer{}, handler.EnqueueRequestsFromMapFunc(all),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == APIServerName })))
	}
	return b.Complete(r)
}

// Reconcile writes (or, for a deleted one, removes) one KubeletConfig's MachineConfigs and
// reports the outcome in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kc := &mcfgv1.KubeletConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, kc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !kc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.writer().Finalize(ctx, kc)
	}
	cluster, err := r.cluster(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	desired, err := kubeletconfig.DesiredFor(kc, cluster)
	if err != nil {
		// The admin's to fix: nothing is written and the previous MachineConfigs stay in
		// effect; an edit of the KubeletConfig, its pools or a base MachineConfig retries.
		return reconcile.Result{}, r.writeStatus(ctx, kc, err)
	}
	w := r.writer()
	if err := w.EnsureMetadata(ctx, kc, &desired.Suffix, desired.MachineConfigs); err != nil {
		return reconcile.Result{}, err
	}
	// Only a write reports the unknown fields, so their warning comes once per change.
	changed, err := w.Apply(ctx, kc, desired.MachineConfigs, cluster.MachineConfigs)
	if err != nil {
		var taken *generated.NameTakenError
		if errors.As(err, &taken) {
			return reconcile.Result{}, r.writeStatus(ctx, kc, err)
		}
		return reconcile.Result{}, err
	}
	if err := w.Prune(ctx, kc, desired.MachineConfigs, cluster.MachineConfigs); err != nil {
		return reconcile.Result{}, err
	}
	if changed {
		if unknown := kubeletconfig.UnknownFields(kc); len(unknown) > 0 {
			r.Recorder.Eventf(kc, corev1.EventTypeWarning, ReasonUnknownFields, "spec.kubeletConfig: dropped as the kubelet does not know them (as OpenShift does): %v", unknown)
		}
	}
	return reconcile.Result{}, r.writeStatus(ctx, kc, nil)
}

// cluster reads what the core needs besides the KubeletConfig.
func (r *Reconciler) cluster(ctx context.Context) (kubeletconfig.Cluster, error) {
	var pools mcfgv1.MachineConfigPoolList
	var mcs mcfgv1.MachineConfigList
	var kcs mcfgv1.KubeletConfigList
	if err := r.Client.List(ctx, &pools); err != nil {
		return kubeletconfig.Cluster{}, err
	}
	if err := r.Client.List(ctx, &mcs); err != nil {
		return kubeletconfig.Cluster{}, err
	}
	if err := r.Reader.List(ctx, &kcs); err != nil {
		return kubeletconfig.Cluster{}, err
	}
	c := kubeletconfig.Cluster{
		Pools:             pools.Items,
		KubeletConfigs:    kcs.Items,
		ControllerVersion: r.Options.ControllerVersion,
		Parse:             r.Parses.Parse,
	}
	for i := range mcs.Items {
		c.MachineConfigs = append(c.MachineConfigs, &mcs.Items[i])
	}
	if r.Options.ServesAPIServer {
		c.ClusterTLS = &kubeletconfig.ClusterTLS{}
		apiServer := &configv1.APIServer{}
		switch err := r.Client.Get(ctx, client.ObjectKey{Name: APIServerName}, apiServer); {
		case err == nil:
			c.ClusterTLS.Profile = apiServer.Spec.TLSSecurityProfile
		case !apierrors.IsNotFound(err):
			return kubeletconfig.Cluster{}, fmt.Errorf("reading APIServer %s: %w", APIServerName, err)
		}
	}
	return c, nil
}

// writeStatus records the sync's outcome (observedGeneration and the Accepted history), only
// when it changed. A refusal is also a Warning event, once per new message.
func (r *Reconciler) writeStatus(ctx context.Context, kc *mcfgv1.KubeletConfig, syncErr error) error {
	st := kubeletconfig.Status(kc.Status, kc.Generation, syncErr, metav1.NewTime(time.Now().Truncate(time.Second)))
	if equalStatus(kc.Status, st) {
		return nil
	}
	if syncErr != nil && lastMessage(kc.Status) != lastMessage(st) {
		r.Recorder.Event(kc, corev1.EventTypeWarning, ReasonRefused, syncErr.Error())
	}
	before := kc.DeepCopy()
	kc.Status = st
	return r.Client.Status().Patch(ctx, kc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
