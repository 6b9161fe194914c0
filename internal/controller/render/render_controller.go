package render

import (
	"context"
	"errors"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/controller/annotationchange"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollback"
)

// Event reasons this controller emits.
const (
	ReasonRenderFailed      = "RenderFailed"
	ReasonRendered          = "RenderedConfigGenerated"
	ReasonTargetChanged     = "SetTargetConfig"
	ReasonSelectsNothing    = "SelectorEmpty"
	ReasonRenderedRestored  = "RenderedConfigRestored"
	ReasonRenderedCollected = "RenderedConfigDeleted"
	ReasonGeneratorsLate    = "GeneratedConfigsLate"
	ReasonRollbackEnded     = "RollbackEnded"
	ReasonRollbackRefused   = "RollbackRefused"
)

// Options configure the render controller.
type Options struct {
	// Defaults are the OS images of pools no admin MachineConfig overrides.
	Defaults render.Defaults
	// ControllerVersion is stamped on rendered configs.
	ControllerVersion string
	// KeepRendered is how many rendered configs per pool survive garbage collection, beyond the
	// ones still referenced.
	KeepRendered int
	// Settle coalesces a burst of input changes into one render (settle.go); zero renders at once.
	Settle Settle
}

// Reconciler renders one pool per reconcile.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
	// Parses is the Ignition parse cache; the manager shares it with the kubelet config
	// controller, which reads the same MachineConfigs. Nil makes one of the controller's own.
	Parses *render.ParseCache
	waits  generatorClock
	bursts burstClock
}

// SetupWithManager registers the controller: pools by spec change, MachineConfigs mapped to
// every pool whose selector matches them (and to the owner of a rendered one, so a deleted
// rendered config that is still the target is recreated), KubeletConfigs and
// ContainerRuntimeConfigs to the pools they select (see generators.go), MachineConfiguration
// cluster to every pool (overrides.go). Changes to MachineConfigs and generators start or
// extend a pool's burst (settle.go).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Parses == nil {
		r.Parses = render.NewParseCache(4096)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("render").
		For(&mcfgv1.MachineConfigPool{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, annotationchange.Predicate(rolloutv1.RollbackAnnotation)))).
		Watches(&mcfgv1.MachineConfig{}, r.inputEvents(r.poolsFor, machineConfigChanged)).
		Watches(&mcfgv1.KubeletConfig{}, r.inputEvents(r.poolsForGenerator, generatorChanged)).
		Watches(&mcfgv1.ContainerRuntimeConfig{}, r.inputEvents(r.poolsForGenerator, generatorChanged)).
		Watches(machineConfiguration(), r.toAllPools(), clusterSpecChanged).
		Complete(r)
}

func (r *Reconciler) poolsFor(ctx context.Context, obj client.Object) []reconcile.Request {
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		log.FromContext(ctx).Error(err, "listing pools for a MachineConfig event")
		return nil
	}
	var reqs []reconcile.Request
	for _, p := range pools.Items {
		owned := metav1.IsControlledBy(obj, &p)
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.MachineConfigSelector)
		if owned || (err == nil && p.Spec.MachineConfigSelector != nil && !sel.Empty() && sel.Matches(labels.Set(obj.GetLabels()))) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: p.Name}})
		}
	}
	return reqs
}

// Reconcile renders the pool and points it at the result.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			r.bursts.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := time.Now()
	// A new pool's first render need not wait: no node can run a config it has not had yet.
	if wait := r.bursts.wait(pool.Name, r.Options.Settle, now); wait > 0 && pool.Spec.Configuration.Name != "" {
		log.FromContext(ctx).V(1).Info("waiting for the pool's inputs to settle before rendering", "pool", pool.Name, "wait", wait)
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	gens, err := r.listGenerators(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	pending := pendingGenerators(pool, gens)
	if hold := r.waits.hold(pool.Name, pending, now); len(pending) > 0 {
		if hold > 0 {
			log.FromContext(ctx).Info("waiting for generated MachineConfigs before rendering", "pool", pool.Name, "generators", describeGenerators(pending))
			return reconcile.Result{RequeueAfter: hold}, nil
		}
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonGeneratorsLate, fmt.Sprintf(
			"rendering without waiting longer than %s for %s", generatorWaitLimit, describeGenerators(pending)))
	}
	r.bursts.rendering(pool.Name, now)
	var mcList mcfgv1.MachineConfigList
	if err := r.Client.List(ctx, &mcList); err != nil {
		return reconcile.Result{}, err
	}
	all := make([]*mcfgv1.MachineConfig, len(mcList.Items))
	for i := range mcList.Items {
		all[i] = &mcList.Items[i]
	}

	overrides, err := r.overrides(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	res, err := render.Render(pool, all, render.Options{
		Defaults:          r.Options.Defaults,
		Current:           findConfig(all, pool.Spec.Configuration.Name),
		Overrides:         overrides,
		ControllerVersion: r.Options.ControllerVersion,
		Parse:             r.Parses.ParseWithWarnings,
		ParseCurrent:      r.Parses.ParseRendered,
	})
	if noSel := (*render.ErrNoSelector)(nil); errors.As(err, &noSel) {
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonSelectsNothing, noSel.Error())
		return reconcile.Result{}, nil
	}
	var status renderStatus
	if err != nil {
		// A render failure is the admin's to fix; the next MachineConfig or pool event retries.
		// The pool keeps its previous target.
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonRenderFailed, err.Error())
		status.failure = fmt.Sprintf("Failed to render configuration for pool %s: %v", pool.Name, err)
	} else if status, err = r.targetRender(ctx, pool, res, all); err != nil {
		return reconcile.Result{}, err
	}
	// The reconcile's one status write, before garbage collection: a deletion that fails must
	// not hold back the render's outcome. A failed render collects nothing.
	if err := r.writeStatus(ctx, pool, status); err != nil || status.failure != "" {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.collectGarbage(ctx, pool, mcList.Items)
}

// targetRender makes the rendered config exist and points the pool at it, or at the earlier
// config a rollback holds it on, and returns the status the render leaves.
func (r *Reconciler) targetRender(ctx context.Context, pool *mcfgv1.MachineConfigPool, res *render.Result, all []*mcfgv1.MachineConfig) (renderStatus, error) {
	if err := r.ensureRendered(ctx, pool, res.Config); err != nil {
		return renderStatus{}, err
	}
	hold := rollback.Hold(pool, res.Config.Name, func(name string) bool { return findConfig(all, name) != nil })
	if err := r.followHold(ctx, pool, hold); err != nil {
		return renderStatus{}, err
	}
	if hold.Target != "" {
		if err := r.setTarget(ctx, pool, targetOf(pool, res, hold.Target)); err != nil {
			return renderStatus{}, err
		}
	}
	return renderStatus{held: hold.Condition, warnings: render.SummarizeWarnings(res.Warnings)}, nil
}

func findConfig(all []*mcfgv1.MachineConfig, name string) *mcfgv1.MachineConfig {
	for _, mc := range all {
		if name != "" && mc.Name == name {
			return mc
		}
	}
	return nil
}
