package servingcert

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	core "github.com/mco-dev/mco/internal/servingcert"
)

// Names of the objects the controller keeps in Options.Namespace for the Machine Config
// Server (Options.Objects' zero value).
const (
	CASecretName      = "machine-config-server-ca-key"
	ServingSecretName = "machine-config-server-tls"
	BundleName        = "machine-config-server-ca"
)

// Objects name one set of the three objects; one Reconciler keeps one set. The same core and
// controller keep the Machine Config Server's certificate and the metrics endpoints' one, each
// under its own names.
type Objects struct {
	// Controller names the controller (its logs and metrics); unique per manager.
	Controller                      string
	CASecret, ServingSecret, Bundle string
}

// ServerObjects are the Machine Config Server's.
var ServerObjects = Objects{Controller: "servingcert", CASecret: CASecretName, ServingSecret: ServingSecretName, Bundle: BundleName}

// MetricsObjects are the metrics endpoints': the controller's, the server's and the agents'
// pods mount Secret mco-metrics-tls, and scrapers trust the CAs in ConfigMap mco-metrics-ca.
var MetricsObjects = Objects{Controller: "metricscert", CASecret: "mco-metrics-ca-key", ServingSecret: "mco-metrics-tls", Bundle: "mco-metrics-ca"}

// MetricsServerName is the one DNS name of the metrics certificate: scrapers reach pods by
// address, so they verify this name (a PodMonitor's tlsConfig.serverName) instead.
func MetricsServerName(namespace string) string { return "mco-metrics." + namespace + ".svc" }

// DefaultMaxRecheck bounds the wait for the next due time: timers do not count time a machine
// spends suspended, and a look every hour costs three cached reads.
const DefaultMaxRecheck = time.Hour

// Options configure the controller.
type Options struct {
	// Namespace of the three objects (the server's, --server-namespace).
	Namespace string
	// Objects are the three objects' names; zero: ServerObjects.
	Objects Objects
	// Names the serving certificate is for.
	Names core.Names
	// Policy of lifetimes, renewal and overlap.
	Policy core.Policy
	// Clock; nil is the real one (tests move time forward).
	Clock clock.PassiveClock
	// MaxRecheck is the longest wait before looking again; zero is DefaultMaxRecheck.
	MaxRecheck time.Duration
}

// Reconciler keeps the three objects as the core decides.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

// SetupWithManager watches the three objects (one work item for all of them) and queues that
// item once at start, when none may exist yet.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Options.Names.Empty() {
		return fmt.Errorf("no names for the serving certificate")
	}
	if err := r.Options.Policy.Validate(); err != nil {
		return err
	}
	ours := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if obj.GetNamespace() != r.Options.Namespace {
			return nil
		}
		switch o := r.objects(); obj.GetName() {
		case o.CASecret, o.ServingSecret, o.Bundle:
			return []reconcile.Request{r.request()}
		}
		return nil
	})
	atStart := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(r.request())
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.objects().Controller).
		Watches(&corev1.Secret{}, ours).
		Watches(&corev1.ConfigMap{}, ours).
		WatchesRawSource(atStart).
		Complete(r)
}

func (r *Reconciler) request() reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: r.Options.Namespace, Name: r.objects().ServingSecret}}
}

func (r *Reconciler) objects() Objects {
	if r.Options.Objects == (Objects{}) {
		return ServerObjects
	}
	return r.Options.Objects
}

func (r *Reconciler) now() time.Time {
	if r.Options.Clock == nil {
		return time.Now()
	}
	return r.Options.Clock.Now()
}

// Reconcile reads the three objects, decides and writes.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	ns := r.Options.Namespace
	ca, serving := &corev1.Secret{}, &corev1.Secret{}
	bundle := &corev1.ConfigMap{}
	var in core.Input
	var err error
	if in.CA, err = r.readSecret(ctx, r.objects().CASecret, ca); err != nil {
		return reconcile.Result{}, err
	}
	if in.Serving, err = r.readSecret(ctx, r.objects().ServingSecret, serving); err != nil {
		return reconcile.Result{}, err
	}
	if in.Bundle, err = r.readConfigMap(ctx, bundle); err != nil {
		return reconcile.Result{}, err
	}
	in.Names, in.Policy, in.Now = r.Options.Names, r.Options.Policy, r.now()
	plan, err := core.Decide(in)
	if err != nil {
		return reconcile.Result{}, err
	}
	objects := map[core.Which]client.Object{core.CASecret: ca, core.ServingSecret: serving, core.BundleConfigMap: bundle}
	if plan.Standby != "" {
		log.FromContext(ctx).Info("not managing the serving certificate", "namespace", ns, "reason", plan.Standby)
		r.emit(plan.Events, objects)
		return reconcile.Result{}, nil
	}
	// The CA first (nothing is signed by a key that is not stored), then the bundle (machines
	// trust a CA before anything it signs is served), then the serving Secret.
	if plan.CA != nil {
		if err := r.writeSecret(ctx, ca, corev1.SecretTypeOpaque, plan.CA); err != nil {
			return reconcile.Result{}, err
		}
	}
	if plan.Bundle != nil {
		if err := r.writeConfigMap(ctx, bundle, plan.Bundle); err != nil {
			return reconcile.Result{}, err
		}
	}
	if plan.Serving != nil {
		if err := r.writeSecret(ctx, serving, corev1.SecretTypeTLS, plan.Serving); err != nil {
			return reconcile.Result{}, err
		}
	}
	r.emit(plan.Events, objects)
	return reconcile.Result{RequeueAfter: r.wait(plan.NextCheck)}, nil
}

// wait is how long until next, at least a second and at most MaxRecheck.
func (r *Reconciler) wait(next time.Time) time.Duration {
	limit := r.Options.MaxRecheck
	if limit <= 0 {
		limit = DefaultMaxRecheck
	}
	if next.IsZero() {
		return limit
	}
	return min(max(next.Sub(r.now()), time.Second), limit)
}

func (r *Reconciler) readSecret(ctx context.Context, name string, into *corev1.Secret) (core.Object, error) {
	into.Namespace, into.Name = r.Options.Namespace, name
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(into), into); err != nil {
		return core.Object{}, client.IgnoreNotFound(err)
	}
	return core.Object{Exists: true, Labels: into.Labels, Annotations: into.Annotations, Data: into.Data}, nil
}

func (r *Reconciler) readConfigMap(ctx context.Context, into *corev1.ConfigMap) (core.Object, error) {
	into.Namespace, into.Name = r.Options.Namespace, r.objects().Bundle
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(into), into); err != nil {
		return core.Object{}, client.IgnoreNotFound(err)
	}
	data := map[string][]byte{}
	for k, v := range into.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, into.BinaryData)
	return core.Object{Exists: true, Labels: into.Labels, Annotations: into.Annotations, Data: data}, nil
}

// stamp gives obj the managed label and the core's annotations, keeping everything else.
func stamp(obj client.Object, w *core.Write) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[core.LabelManaged] = ""
	obj.SetLabels(labels)
	if len(w.Annotations) > 0 {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		maps.Copy(ann, w.Annotations)
		obj.SetAnnotations(ann)
	}
}

// writeSecret creates sec (read before: empty resourceVersion means absent) or updates it.
func (r *Reconciler) writeSecret(ctx context.Context, sec *corev1.Secret, typ corev1.SecretType, w *core.Write) error {
	stamp(sec, w)
	sec.Data = w.Data
	if sec.ResourceVersion == "" {
		sec.Type = typ
		if err := r.Client.Create(ctx, sec); err != nil {
			return fmt.Errorf("creating Secret %s/%s: %w", sec.Namespace, sec.Name, err)
		}
		return nil
	}
	if sec.Type != typ {
		// The type cannot change; the object was replaced by hand with our label on it.
		return fmt.Errorf("Secret %s/%s: type %s, want %s; delete it and mco creates it again", sec.Namespace, sec.Name, sec.Type, typ)
	}
	if err := r.Client.Update(ctx, sec); err != nil {
		return fmt.Errorf("updating Secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
}

func (r *Reconciler) writeConfigMap(ctx context.Context, cm *corev1.ConfigMap, w *core.Write) error {
	stamp(cm, w)
	cm.Data, cm.BinaryData = map[string]string{}, nil
	for k, v := range w.Data {
		cm.Data[k] = string(v)
	}
	if cm.ResourceVersion == "" {
		if err := r.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	}
	if err := r.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

// emit records the plan's events on the objects they are about, when those exist (a
// stored object has a UID).
func (r *Reconciler) emit(events []core.Event, objects map[core.Which]client.Object) {
	for _, e := range events {
		obj := objects[e.About]
		if obj.GetUID() == "" {
			continue
		}
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		kind := "Secret"
		if e.About == core.BundleConfigMap {
			kind = "ConfigMap"
		}
		r.Recorder.Eventf(obj, typ, e.Reason, "%s %s/%s: %s", kind, obj.GetNamespace(), obj.GetName(), e.Message)
	}
}
