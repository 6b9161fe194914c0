package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/controller/annotationchange"
	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Event reasons this controller emits.
const (
	ReasonSetDesiredConfig  = "SetDesiredConfig"
	ReasonCompleted         = "Completed"
	ReasonMultiplePools     = "MultipleCustomPools"
	ReasonInvalidPoolConfig = "InvalidPoolConfiguration"
	ReasonNodeUnresponsive  = "NodeUnresponsive"
	ReasonUpdateStalled     = "UpdateStalled"
)

// Options configure the node controller.
type Options struct {
	// NotReadyThreshold is how long a node may stay NotReady during an update before its pool
	// reports it and starts no further nodes (rollout.DefaultNotReadyThreshold when 0).
	NotReadyThreshold time.Duration
	// StallThreshold is how long a Ready node may take to finish moving to the target it was
	// given before its pool reports it (UpdateStalled; rollout.DefaultStallThreshold when 0).
	StallThreshold time.Duration
	// Pacing follows MachineConfigPoolRollout policies (set where the cluster serves the kind);
	// off, pools are paced by maxUnavailable alone and nothing watches policies or pods.
	Pacing bool
}

// Reconciler rolls one pool per reconcile.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
	// Clock is the pacing clock (soaks, windows, batch finish times); nil is the real one.
	// Tests pass a fake to walk through soaks and windows; NotReady thresholds use real time.
	Clock clock.PassiveClock

	pending *pendingWrites
	nodes   toolscache.Store
	// plans remembers what moving between two rendered configs does (drainForecast).
	plans changeplan.Cache
	// statusWrites paces writes of a pool's status that change only its counts.
	statusWrites statusWrites
	// decisions spaces the decisions Node events wake a pool for.
	decisions decisions
	// owners remembers which pool each rendered config a node first booted into belongs to.
	owners ownerMemo
	// reported remembers warnings already emitted (key → message), so events mark transitions
	// instead of repeating on every reconcile.
	reportedMu sync.Mutex
	reported   map[string]string
	// adoptionBaselines are the pools whose waiting nodes this process has looked at
	// (reportAdoptions): events mark changes from what the Nodes said then.
	adoptionBaselines map[string]bool
}

// SetupWithManager registers the controller. Pools are keyed by name; a pool's spec change
// requeues every pool (a new or changed nodeSelector moves nodes between pools), and a node
// change requeues the pools selecting it before and after the change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.pending = newPendingWrites()
	r.reported = map[string]string{}
	nodes, err := nodeStore(mgr)
	if err != nil {
		return fmt.Errorf("node informer: %w", err)
	}
	r.nodes = nodes
	b := ctrl.NewControllerManagedBy(mgr).
		Named("node").
		// A pool's labels choose its pacing policy.
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, &mcfgv1.MachineConfigPoolList{}, "pools")),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
				annotationchange.Predicate(protocol.AdoptAnnotation, rolloutv1.RollbackAnnotation)))).
		Watches(&corev1.Node{}, r.nodeHandler(), builder.WithPredicates(relevantNodeChange)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, RateLimiter: retryLimiter()})
	if r.Options.Pacing {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeNameField, func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}); err != nil {
			return fmt.Errorf("indexing pods by node: %w", err)
		}
		// A policy's spec or its resume annotation; its status is this controller's own write.
		b = b.Watches(&rolloutv1.MachineConfigPoolRollout{}, handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, &mcfgv1.MachineConfigPoolList{}, "pools")),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
			Watches(&corev1.Pod{}, r.podHandler(), builder.WithPredicates(daemonSetPodReadiness))
	}
	return b.Complete(r)
}

// Reconcile decides the pool's next step and writes it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// The decision reads the cache from here on: a Node event from now on may change it, and
	// wakes the pool again once the spacing has passed. Recorded before anything is read, or
	// the events of that moment, spaced from the decision before, would ask for another one
	// right after this.
	began := time.Now()
	r.decisions.begin(req.Name, began)
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if client.IgnoreNotFound(err) == nil {
			forgetPoolMetrics(req.Name)
			r.statusWrites.forget(req.Name)
			r.decisions.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	members, unmanaged, read, labelErr, err := r.members(ctx, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.decisions.read(pool.Name, read)
	paced, err := r.pace(ctx, pool, members)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Before the decision: a skipped node's slot goes to the next node in the same pass.
	members, skipDue, skipErr := r.skipBlockedDrains(ctx, pool, paced, members)
	notesErr := r.clearDrainNotes(ctx, members, pool.Spec.Configuration.Name)
	in := rollout.Input{Pool: pool, Nodes: members, Unmanaged: unmanaged, Now: metav1.Now(), NotReadyThreshold: r.Options.NotReadyThreshold,
		StallThreshold: r.Options.StallThreshold}
	if paced != nil {
		in.StartBudget = paced.budget()
	}
	d := rollout.Decide(in)
	if rolled, err := r.rollBackOnFailure(ctx, pool, members, paced, d); err != nil || rolled {
		// No node is started towards the failed target: the render controller points the pool
		// back, and that change wakes this controller.
		return reconcile.Result{}, err
	}
	heldPhase(pool, paced)
	if paced != nil {
		// Before the nodes: a batch is counted before any node of it starts.
		if err := r.record(ctx, paced, d.Started); err != nil {
			return reconcile.Result{}, err
		}
	}
	for _, problem := range d.Problems {
		r.warnOnce(pool, "pool/"+pool.Name, ReasonInvalidPoolConfig, problem)
	}
	r.reportUnresponsive(pool, members, d.Unresponsive)
	r.reportStalled(pool, members, d.Stalled)
	recordPoolMetrics(pool.Name, d.Status, len(d.Unresponsive), len(d.AwaitingAdoption), pool.Spec.Paused || paced.holds() || d.OnlyHeld)
	offersErr := r.writeOffers(ctx, d.Offers, append(slices.Clip(members), unmanaged...))
	nodesErr := r.writeNodes(ctx, pool, members, unmanaged, d)
	if err := r.recordPrevious(ctx, pool, d); err != nil {
		return reconcile.Result{}, errors.Join(err, offersErr, nodesErr)
	}
	countsDue, err := r.writeStatus(ctx, pool, d, began)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Nothing about a node that stays NotReady changes at the threshold, nor when a soak ends
	// or a window opens, so no event comes then: look again when one is due; and when counts
	// wait to be written.
	requeue := d.RecheckAfter
	for _, after := range []time.Duration{countsDue, paced.requeueAfter(), skipDue} {
		if after > 0 && (requeue == 0 || after < requeue) {
			requeue = after
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, errors.Join(labelErr, offersErr, nodesErr, skipErr, notesErr)
}

// reportUnresponsive emits one Warning per node and config it did not come back from, and
// forgets nodes that came back (so a second outage is reported again).
func (r *Reconciler) reportUnresponsive(pool *mcfgv1.MachineConfigPool, members []*corev1.Node, lost []rollout.Unresponsive) {
	isLost := map[string]bool{}
	for _, u := range lost {
		isLost[u.Node] = true
		r.warnOnce(pool, "unresponsive/"+pool.Name+"/"+u.Node, ReasonNodeUnresponsive,
			fmt.Sprintf("%s; no further nodes of pool %s are started until it is Ready again or deleted", u, pool.Name))
	}
	r.forgetNodeWarnings("unresponsive/"+pool.Name+"/", members, isLost)
}

// reportStalled emits one Warning per node and target it stopped moving to, and forgets nodes
// that moved on (so a second stall is reported again).
func (r *Reconciler) reportStalled(pool *mcfgv1.MachineConfigPool, members []*corev1.Node, stuck []rollout.Stalled) {
	isStuck := map[string]bool{}
	for _, s := range stuck {
		isStuck[s.Node] = true
		r.warnOnce(pool, "stalled/"+pool.Name+"/"+s.Node, ReasonUpdateStalled, s.String())
	}
	r.forgetNodeWarnings("stalled/"+pool.Name+"/", members, isStuck)
}

// members lists the pool's managed nodes and its nodes not managed yet (joining, or waiting to
// be adopted) from the cache, as this controller last wrote them (a node whose adoption this
// controller started is managed from that write on, even before the cache shows it), and
// reports nodes the pool shares with another custom pool. Nodes that first booted into a
// custom pool get its labels first (settleCustomBoots), and nodes no pool manages lose their
// adoption offer; labelErr is a failure to write either, which leaves labelled nodes out until
// a retry.
func (r *Reconciler) members(ctx context.Context, pool *mcfgv1.MachineConfigPool) (members, unmanaged []*corev1.Node, read int, labelErr, err error) {
	var poolList mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &poolList); err != nil {
		return nil, nil, 0, nil, err
	}
	// Every reconcile reads every Node, and copying them all was most of a reconcile's cost at
	// 5,000 nodes (bench/rollout: the controller used 74 s of CPU for 776 reconciles of the
	// pool with deep copies, 56 s for 1,263 without) and most of its garbage (nodeStore).
	nodes := r.listNodes()
	pools := make([]*mcfgv1.MachineConfigPool, len(poolList.Items))
	for i := range poolList.Items {
		pools[i] = &poolList.Items[i]
	}
	read = len(nodes)
	r.pending.forgetMissing(nodes)
	held, labelErr := r.settleCustomBoots(ctx, pools, nodes)
	if len(held) > 0 {
		nodes = slices.DeleteFunc(nodes, func(n *corev1.Node) bool { return held[n.Name] })
	}
	strayErr := r.withdrawStrayOffers(ctx, pools, nodes)
	members, unmanaged, ambiguous := rollout.Split(pool, pools, r.pending.overlay(nodes))
	for _, amb := range ambiguous {
		for _, n := range nodes {
			if n.Name == amb.Node {
				r.warnOnce(n, "node/"+n.Name, ReasonMultiplePools, amb.Error())
			}
		}
	}
	r.forgetNodeWarnings("node/", members, nil)
	return members, unmanaged, read, errors.Join(labelErr, strayErr), nil
}

// warnOnce emits a Warning event unless the same message was already emitted for key.
func (r *Reconciler) warnOnce(obj client.Object, key, reason, message string) {
	r.eventOnce(obj, key, corev1.EventTypeWarning, reason, message)
}

// eventOnce emits an event unless the same message was already emitted for key.
func (r *Reconciler) eventOnce(obj client.Object, key, eventType, reason, message string) {
	r.reportedMu.Lock()
	seen := r.reported[key] == message
	r.reported[key] = message
	r.reportedMu.Unlock()
	if !seen {
		r.Recorder.Event(obj, eventType, reason, message)
	}
}

func (r *Reconciler) forgetWarning(key string) {
	r.reportedMu.Lock()
	delete(r.reported, key)
	r.reportedMu.Unlock()
}

// forgetNodeWarnings forgets the warnings keyed prefix + node name of nodes, except those keep
// names. It walks the few warnings remembered instead of building every node's key: a decision
// does this for every node of its pool.
func (r *Reconciler) forgetNodeWarnings(prefix string, nodes []*corev1.Node, keep map[string]bool) {
	r.reportedMu.Lock()
	defer r.reportedMu.Unlock()
	var named map[string]bool
	for key := range r.reported {
		if name, ok := strings.CutPrefix(key, prefix); ok && !keep[name] {
			if named == nil {
				named = make(map[string]bool, len(nodes))
				for _, n := range nodes {
					named[n.Name] = true
				}
			}
			if named[name] {
				delete(r.reported, key)
			}
		}
	}
}
