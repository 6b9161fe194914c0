package registries

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/generated"
	"github.com/mco-dev/mco/internal/registries"
	"github.com/mco-dev/mco/internal/scheme"
)

// Event reasons.
const (
	ReasonGenerated = generated.ReasonGenerated
	ReasonUpdated   = generated.ReasonUpdated
	ReasonDeleted   = generated.ReasonDeleted
	ReasonRefused   = "RegistriesConfigRefused"
	// ReasonPayloadNotBlocked: a blocked registry holds the release payload, which has no
	// unblocked mirror, so it is left out (OpenShift logs this).
	ReasonPayloadNotBlocked = "PayloadRegistryNotBlocked"
)

// ClusterVersionName is the one ClusterVersion; its status.desired.image is the release payload.
const ClusterVersionName = "version"

// Options configure the controller.
type Options struct {
	// ControllerVersion is stamped on generated MachineConfigs (generated-by-controller-version).
	ControllerVersion string
}

// Reconciler keeps every built-in pool's registries MachineConfig. All its inputs are
// cluster-wide, so there is one key.
type Reconciler struct {
	Client client.Client
	// Reader reads the ClusterVersion uncached: only OpenShift serves it, and the controller must
	// not need an informer (nor its RBAC) for a kind that is usually absent.
	Reader   client.Reader
	Recorder record.EventRecorder
	Options  Options
	// clusterVersions: the cluster serves ClusterVersions (decided once at setup; the kind is
	// OpenShift's and does not come and go).
	clusterVersions bool
}

var key = reconcile.Request{NamespacedName: client.ObjectKey{Name: registries.ImageConfigName}}

func enqueue(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{key} }

// SetupWithManager watches every input and the generated MachineConfigs (a hand edit or
// deletion is put back); a MachineConfig writing registries.conf or policy.json may be a base.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	served, err := scheme.Serves(mgr.GetRESTMapper(), apicfgv1.GroupVersion.WithKind("ClusterVersion"))
	if err != nil {
		return fmt.Errorf("asking whether the cluster serves ClusterVersions: %w", err)
	}
	r.clusterVersions = served
	return ctrl.NewControllerManagedBy(mgr).
		Named("registries").
		Watches(&apicfgv1.Image{}, handler.EnqueueRequestsFromMapFunc(enqueue)).
		Watches(&apicfgv1.ImageDigestMirrorSet{}, handler.EnqueueRequestsFromMapFunc(enqueue)).
		Watches(&apicfgv1.ImageTagMirrorSet{}, handler.EnqueueRequestsFromMapFunc(enqueue)).
		Watches(&apioperatorsv1alpha1.ImageContentSourcePolicy{}, handler.EnqueueRequestsFromMapFunc(enqueue)).
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(enqueue),
			// Not every generation change: each render bumps it, and a render changes nothing here.
			builder.WithPredicates(generated.PoolInputChanged())).
		Watches(&mcfgv1.MachineConfig{}, handler.EnqueueRequestsFromMapFunc(forMachineConfig)).
		Complete(r)
}

// Reconcile regenerates every built-in pool's registries MachineConfig.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	cluster, err := r.cluster(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	var pools mcfgv1.MachineConfigPoolList
	var mcs mcfgv1.MachineConfigList
	if err := r.Client.List(ctx, &pools); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.Client.List(ctx, &mcs); err != nil {
		return reconcile.Result{}, err
	}
	existing := make([]*mcfgv1.MachineConfig, len(mcs.Items))
	for i := range mcs.Items {
		existing[i] = &mcs.Items[i]
	}
	var desired []*mcfgv1.MachineConfig
	if cluster.Configured() {
		plan, err := registries.NewPlan(cluster)
		if err != nil {
			// The admin's to fix: nothing changes until the object at fault does.
			r.refuse(ctx, cluster, err)
			return reconcile.Result{}, nil
		}
		if dropped := plan.Dropped(); len(dropped) > 0 && cluster.Image != nil {
			r.Recorder.Eventf(cluster.Image, corev1.EventTypeWarning, ReasonPayloadNotBlocked,
				"spec.registrySources.blockedRegistries: %s not blocked: it holds the release payload %s, which no unblocked mirror serves", strings.Join(dropped, ", "), cluster.ReleaseImage)
		}
		for _, pool := range registries.Pools(pools.Items) {
			bases, err := registries.FindBases(pool, existing)
			if err == nil {
				var mc *mcfgv1.MachineConfig
				if mc, err = plan.Generate(pool, bases, r.Options.ControllerVersion); err == nil {
					desired = append(desired, mc)
					continue
				}
			}
			r.refuse(ctx, cluster, fmt.Errorf("pool %s: %w", pool.Name, err))
			return reconcile.Result{}, nil
		}
	}
	if err := r.apply(ctx, cluster, desired, existing); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.prune(ctx, cluster, desired, existing); err != nil {
		return reconcile.Result{}, err
	}
	if cluster.ReleaseImage != "" {
		// The ClusterVersion is read without a watch; an upgrade's new payload is seen here.
		return reconcile.Result{RequeueAfter: releaseRecheck}, nil
	}
	return reconcile.Result{}, nil
}

// releaseRecheck is how often the release image is looked at again where there is one.
const releaseRecheck = 10 * time.Minute

// cluster reads the controller's inputs. The ClusterVersion's release image is read only where
// the kind is served (OpenShift), uncached; elsewhere there is none.
func (r *Reconciler) cluster(ctx context.Context) (registries.Cluster, error) {
	var c registries.Cluster
	img := &apicfgv1.Image{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: registries.ImageConfigName}, img); {
	case err == nil:
		c.Image = img
	case !apierrors.IsNotFound(err):
		return c, fmt.Errorf("reading image.config.openshift.io %s: %w", registries.ImageConfigName, err)
	}
	var idms apicfgv1.ImageDigestMirrorSetList
	var itms apicfgv1.ImageTagMirrorSetList
	var icsp apioperatorsv1alpha1.ImageContentSourcePolicyList
	if err := r.Client.List(ctx, &idms); err != nil {
		return c, err
	}
	if err := r.Client.List(ctx, &itms); err != nil {
		return c, err
	}
	if err := r.Client.List(ctx, &icsp); err != nil {
		return c, err
	}
	for i := range idms.Items {
		c.IDMS = append(c.IDMS, &idms.Items[i])
	}
	for i := range itms.Items {
		c.ITMS = append(c.ITMS, &itms.Items[i])
	}
	for i := range icsp.Items {
		c.ICSP = append(c.ICSP, &icsp.Items[i])
	}
	if !r.clusterVersions {
		return c, nil
	}
	cv := &apicfgv1.ClusterVersion{}
	switch err := r.Reader.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, cv); {
	case err == nil:
		c.ReleaseImage = cv.Status.Desired.Image
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
	default:
		return c, fmt.Errorf("reading ClusterVersion %s: %w", ClusterVersionName, err)
	}
	return c, nil
}

// refuse reports a refused input as a Warning event on the object it names (else the image
// config) and in the log.
func (r *Reconciler) refuse(ctx context.Context, c registries.Cluster, err error) {
	log.FromContext(ctx).Error(err, "registries configuration refused; generated MachineConfigs left as they are")
	var obj client.Object = c.Image
	var fieldErr *registries.Error
	if errors.As(err, &fieldErr) {
		if o := objectNamed(c, fieldErr.Object); o != nil {
			obj = o
		}
	}
	if obj != nil {
		r.Recorder.Event(obj, corev1.EventTypeWarning, ReasonRefused, err.Error())
	}
}

// objectNamed finds the object a registries.Error names ("<Kind> <name>").
func objectNamed(c registries.Cluster, name string) client.Object {
	for _, o := range c.IDMS {
		if name == "ImageDigestMirrorSet "+o.Name {
			return o
		}
	}
	for _, o := range c.ITMS {
		if name == "ImageTagMirrorSet "+o.Name {
			return o
		}
	}
	for _, o := range c.ICSP {
		if name == "ImageContentSourcePolicy "+o.Name {
			return o
		}
	}
	return nil
}
