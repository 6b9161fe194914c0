package drain

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
)

// Event reasons this controller emits on Nodes.
const (
	ReasonDrainBlocked   = "DrainBlocked"
	ReasonRecordoned     = "Recordoned"
	ReasonInvalidRequest = "InvalidDrainRequest"
)

// DefaultBlockedThreshold is how long a drain may take before it is reported as blocked.
const DefaultBlockedThreshold = 10 * time.Minute

// Options configure the drain controller.
type Options struct {
	// BlockedThreshold is how long a drain may run before it is reported as blocked.
	BlockedThreshold time.Duration
	// Pacing reads the MachineConfigPoolRollout of a draining node's pool for its spec.drain
	// (set where the cluster serves the kind); off, a blocked drain waits, as it always did.
	Pacing bool
}

// Reconciler carries out one node's drain request per reconcile.
type Reconciler struct {
	// Client reads Nodes from the cache and patches them.
	Client client.Client
	// Kube lists pods and PodDisruptionBudgets and evicts, uncached: a drain needs one node's
	// pods for a moment, not a cache of every pod in the cluster.
	Kube     kubernetes.Interface
	Recorder record.EventRecorder
	Options  Options

	// written is the resourceVersion of this controller's last write to each node: a cached node
	// older than that is stale, and acting on it would repeat the write.
	writtenMu sync.Mutex
	written   map[string]string
}

// SetupWithManager registers the controller: Nodes whose drain request, acknowledgement or
// cordon changed. Five workers, so one slow node never holds up the others.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Options.BlockedThreshold <= 0 {
		r.Options.BlockedThreshold = DefaultBlockedThreshold
	}
	r.written = map[string]string{}
	return ctrl.NewControllerManagedBy(mgr).
		Named("drain").
		For(&corev1.Node{}, builder.WithPredicates(drainChange)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 5}).
		Complete(r)
}

var drainChange = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
		return o.Annotations[protocol.DesiredDrainAnnotation] != n.Annotations[protocol.DesiredDrainAnnotation] ||
			o.Annotations[protocol.LastAppliedDrainAnnotation] != n.Annotations[protocol.LastAppliedDrainAnnotation] ||
			o.Spec.Unschedulable != n.Spec.Unschedulable
	},
}

// Reconcile acts on the node's desiredDrain if it differs from lastAppliedDrain.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, req.NamespacedName, node); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.forget(req.Name)
			forgetNodeMetrics(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if r.stale(node) {
		// Our own last write is on its way into the cache; its event requeues us.
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	wanted := node.Annotations[protocol.DesiredDrainAnnotation]
	if wanted != "" && wanted == node.Annotations[protocol.LastAppliedDrainAnnotation] && withdrawnDrain(node, wanted) {
		// A drain began after this uncordon was carried out and was withdrawn for the same
		// uncordon (a node skipped twice for a blocked drain, spec.drain): carry it out again.
		return reconcile.Result{}, r.acknowledge(ctx, node, wanted, false)
	}
	if wanted == "" || wanted == node.Annotations[protocol.LastAppliedDrainAnnotation] {
		return reconcile.Result{}, nil
	}
	verb, err := ParseRequest(wanted)
	if err != nil {
		r.Recorder.Event(node, corev1.EventTypeWarning, ReasonInvalidRequest, err.Error())
		return reconcile.Result{}, nil // the agent has to write a new request
	}
	if verb == VerbUncordon {
		return reconcile.Result{}, r.acknowledge(ctx, node, wanted, false)
	}
	return r.drain(ctx, node, wanted)
}

// withdrawnDrain: the request is an uncordon already acknowledged, yet a drain started since
// (drain-started-at is removed by every acknowledgement, in the same write).
func withdrawnDrain(node *corev1.Node, wanted string) bool {
	verb, err := ParseRequest(wanted)
	return err == nil && verb == VerbUncordon && node.Annotations[protocol.DrainStartedAtAnnotation] != ""
}

// drain cordons, makes one eviction pass, and acknowledges once no pod is left.
func (r *Reconciler) drain(ctx context.Context, node *corev1.Node, wanted string) (reconcile.Result, error) {
	now := time.Now()
	started, err := time.Parse(time.RFC3339, node.Annotations[protocol.DrainStartedAtAnnotation])
	if err != nil || started.After(now) {
		started = now
	}
	if !node.Spec.Unschedulable || node.Annotations[protocol.DrainStartedAtAnnotation] == "" {
		if node.Annotations[protocol.DrainStartedAtAnnotation] != "" {
			r.Recorder.Eventf(node, corev1.EventTypeWarning, ReasonRecordoned, "Node was uncordoned while draining for %s; cordoned it again", wanted)
		}
		if err := r.patch(ctx, node, func(n *corev1.Node) {
			n.Spec.Unschedulable = true
			n.Annotations[protocol.DrainStartedAtAnnotation] = started.UTC().Format(time.RFC3339)
		}, false); err != nil {
			return reconcile.Result{}, fmt.Errorf("cordoning: %w", err)
		}
	}
	obstacles, err := evictOnce(ctx, r.Kube, node.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(obstacles) > 0 && !onlyEvictedNow(obstacles) {
		return r.stillBlocked(ctx, node, wanted, obstacles, now.Sub(started))
	}
	if len(obstacles) > 0 {
		// Everything left was evicted just now; pods with no grace period are already gone.
		if obstacles, err = evictOnce(ctx, r.Kube, node.Name); err != nil || len(obstacles) > 0 {
			if err != nil {
				return reconcile.Result{}, err
			}
			return r.stillBlocked(ctx, node, wanted, obstacles, now.Sub(started))
		}
	}
	if err := r.acknowledge(ctx, node, wanted, true); err != nil {
		return reconcile.Result{}, err
	}
	drainSeconds.Observe(time.Since(started).Seconds())
	return reconcile.Result{}, nil
}

// onlyEvictedNow is true when no obstacle is a budget refusal: a second look may find the node
// already empty, which saves a requeue for pods with no grace period.
func onlyEvictedNow(obstacles []Obstacle) bool {
	for _, o := range obstacles {
		if o.Refused || len(o.Budgets) > 0 || o.Detail != "" {
			return false
		}
	}
	return true
}

// stillBlocked keeps the blocked time, deletes the refused pods once the pool's spec.drain says
// so, requeues, and once the drain is older than the threshold reports what blocks it.
func (r *Reconciler) stillBlocked(ctx context.Context, node *corev1.Node, wanted string, obstacles []Obstacle, age time.Duration) (reconcile.Result, error) {
	recordObstacles(node.Name, obstacles)
	policy, err := r.policyFor(ctx, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := time.Now()
	if err := r.trackBlocked(ctx, node, Refused(obstacles), now); err != nil {
		return reconcile.Result{}, err
	}
	// Skipping is the node controller's (it moves desiredConfig); here only the deletion acts.
	blocked := drainpolicy.Read(node)
	step := drainpolicy.Decide(policy.Policy, blocked, now, false)
	if step.Now == drainpolicy.DeletePods {
		if err := r.deleteRefused(ctx, node, wanted, obstacles, policy, blocked.Total(now)); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	threshold := ReportThreshold(r.Options.BlockedThreshold, policy.Policy)
	next := reconcile.Result{RequeueAfter: BlockedRequeue(Backoff(age, threshold), step.RequeueAfter(now))}
	if age < threshold {
		return next, nil
	}
	msg := BlockedMessage(obstacles)
	drainErr.WithLabelValues(node.Name).Set(1)
	if node.Annotations[protocol.DrainBlockedAnnotation] == msg {
		return next, nil
	}
	if err := r.patch(ctx, node, func(n *corev1.Node) { n.Annotations[protocol.DrainBlockedAnnotation] = msg }, false); err != nil {
		return reconcile.Result{}, err
	}
	r.Recorder.Eventf(node, corev1.EventTypeWarning, ReasonDrainBlocked, "Drain running for %s is blocked: %s", age.Round(time.Second), msg)
	return next, nil
}

// acknowledge writes lastAppliedDrain (and the cordon state the request asked for) in one patch
// and drops the drain bookkeeping. After a drain the patch carries an optimistic lock: if someone
// uncordoned the node since it was read, new pods may have landed, so the drain goes round again.
func (r *Reconciler) acknowledge(ctx context.Context, node *corev1.Node, wanted string, cordon bool) error {
	err := r.patch(ctx, node, func(n *corev1.Node) {
		n.Spec.Unschedulable = cordon
		n.Annotations[protocol.LastAppliedDrainAnnotation] = wanted
		delete(n.Annotations, protocol.DrainStartedAtAnnotation)
		delete(n.Annotations, protocol.DrainBlockedAnnotation)
		// A drain that ends blocked (withdrawn: the node was skipped) keeps its blocked time.
		endStint(n, time.Now())
	}, cordon)
	if err != nil {
		return fmt.Errorf("acknowledging %s: %w", wanted, err)
	}
	forgetNodeMetrics(node.Name)
	return nil
}

// patch applies change to node with a merge patch (only the fields changed) and remembers the
// resulting resourceVersion. node is updated to the server's answer.
func (r *Reconciler) patch(ctx context.Context, node *corev1.Node, change func(*corev1.Node), lock bool) error {
	before := node.DeepCopy()
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	change(node)
	var opts []client.MergeFromOption
	if lock {
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	if err := r.Client.Patch(ctx, node, client.MergeFromWithOptions(before, opts...)); err != nil {
		return err
	}
	r.writtenMu.Lock()
	r.written[node.Name] = node.ResourceVersion
	r.writtenMu.Unlock()
	return nil
}

// stale reports whether the cached node predates this controller's last write to it.
func (r *Reconciler) stale(node *corev1.Node) bool {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	rv, ok := r.written[node.Name]
	if !ok {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(node.ResourceVersion, rv)
	if err != nil || cmp >= 0 {
		delete(r.written, node.Name)
		return false
	}
	return true
}

func (r *Reconciler) forget(node string) {
	r.writtenMu.Lock()
	delete(r.written, node)
	r.writtenMu.Unlock()
}
