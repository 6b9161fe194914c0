package node

import (
	"context"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/pacing"
)

// ReasonPacingRefused is the Warning event on a pool whose pacing policy cannot be followed
// (two policies select it, or its policy does not compile): nothing of it starts meanwhile.
const ReasonPacingRefused = "PacingRefused"

// podNodeNameField indexes the cached DaemonSet pods by node, for the health gate.
const podNodeNameField = "spec.nodeName"

// paced is one pool's pacing decision, made before the rollout decision it caps and recorded
// after it, once the number of nodes actually started is known.
type paced struct {
	policy   *rolloutv1.MachineConfigPoolRollout
	pool     string
	target   string
	state    pacing.State
	decision pacing.Decision
	// drain is the policy's spec.drain (drainpolicy.Default without one).
	drain drainpolicy.Policy
}

// holds reports whether the policy keeps the pool from starting nodes on purpose (a hold, a
// window, the gate, a refusal), so a stall alert can tell it from a stuck rollout. A canary
// whose nodes are still updating is not held: a stuck canary node must still raise the alert.
func (p *paced) holds() bool { return p != nil && p.decision.Held }

// requeueAfter is when the policy wants the pool looked at again (a soak ends, a window
// opens); 0 for none or no policy.
func (p *paced) requeueAfter() time.Duration {
	if p == nil {
		return 0
	}
	return p.decision.RequeueAfter
}

// budget is how many healthy nodes the policy lets start now.
func (p *paced) budget() *int { return &p.decision.Start }

// pace finds the policy selecting pool and decides; nil when the pool has none (maxUnavailable
// alone paces it, exactly as without the feature). Entries this pool left behind in policies
// that no longer select it are removed on the way.
func (r *Reconciler) pace(ctx context.Context, pool *mcfgv1.MachineConfigPool, members []*corev1.Node) (*paced, error) {
	if !r.Options.Pacing {
		return nil, nil
	}
	var list rolloutv1.MachineConfigPoolRolloutList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing MachineConfigPoolRollouts: %w", err)
	}
	selecting := pacing.Selecting(list.Items, pool)
	for i := range list.Items {
		p := &list.Items[i]
		if pacing.PoolEntry(&p.Status, pool.Name) != nil && !contains(selecting, p) {
			if err := r.writePolicyEntry(ctx, p, pool.Name, nil); err != nil {
				return nil, err
			}
		}
	}
	target := pool.Spec.Configuration.Name
	now := r.now()
	switch {
	case len(selecting) == 0:
		r.forgetWarning("pacing/" + pool.Name)
		return nil, nil
	case len(selecting) > 1:
		return r.refusePacing(ctx, pool, target, selecting, pacing.ConflictReason(pool.Name, selecting))
	}
	policy := selecting[0]
	compiled, err := pacing.Compile(policy.Spec)
	if err != nil {
		return r.refusePacing(ctx, pool, target, selecting, fmt.Sprintf("mcprollout/%s is invalid: %v; no node of pool %s starts until it is fixed", policy.Name, err, pool.Name))
	}
	r.forgetWarning("pacing/" + pool.Name)
	nodes := pacing.NodeStates(members, target, nil)
	if compiled.GateDaemonSets {
		if err := r.fillUnreadyPods(ctx, nodes); err != nil {
			return nil, err
		}
	}
	st := pacing.StateFor(policy, pool.Name, target, nodes, pool.Spec.Paused)
	if target == "" {
		// The render controller has not set a target: nothing is Pending yet.
		return &paced{policy: policy, pool: pool.Name, state: st, decision: pacing.Decision{Phase: rolloutv1.PhaseIdle, Reason: "no rendered config yet"}}, nil
	}
	return &paced{policy: policy, pool: pool.Name, target: target, state: st, decision: pacing.Decide(compiled, st, now), drain: compiled.Drain}, nil
}

// refusePacing holds every start of the pool, says why on the pool and in each policy, and
// returns a zero budget.
func (r *Reconciler) refusePacing(ctx context.Context, pool *mcfgv1.MachineConfigPool, target string, policies []*rolloutv1.MachineConfigPoolRollout, why string) (*paced, error) {
	r.warnOnce(pool, "pacing/"+pool.Name, ReasonPacingRefused, why)
	d := pacing.Decision{Phase: rolloutv1.PhasePaused, Reason: "paused: " + why, Held: true}
	for _, p := range policies {
		e := rolloutv1.PoolRolloutStatus{Name: pool.Name, Target: target, Phase: d.Phase, Reason: d.Reason}
		if old := pacing.PoolEntry(&p.Status, pool.Name); old != nil && old.Target == target {
			e.Batch, e.BatchFinishedAt = old.Batch, old.BatchFinishedAt
		}
		if err := r.writePolicyEntry(ctx, p, pool.Name, &e); err != nil {
			return nil, err
		}
	}
	return &paced{pool: pool.Name, target: target, decision: d}, nil
}

// record writes the pool's entry once the rollout decision is known (before its nodes are
// written, so a batch is counted before any of its nodes starts).
func (r *Reconciler) record(ctx context.Context, p *paced, started int) error {
	if p.policy == nil {
		return nil // refused: already recorded
	}
	batch, finished := pacing.Record(p.state, p.decision, started)
	e := pacing.Entry(p.pool, p.target, p.decision, batch, finished)
	return r.writePolicyEntry(ctx, p.policy, p.pool, &e)
}

// writePolicyEntry sets (or, with e nil, removes) the pool's entry in the policy's status, if
// that changes it. A conflict with another pool's write fails the reconcile, which retries
// from the cache with backoff; no node is written meanwhile.
func (r *Reconciler) writePolicyEntry(ctx context.Context, policy *rolloutv1.MachineConfigPoolRollout, pool string, e *rolloutv1.PoolRolloutStatus) error {
	updated := policy.DeepCopy()
	if e == nil {
		pacing.SetPool(&updated.Status, nil, func(name string) bool { return name != pool })
	} else {
		pacing.SetPool(&updated.Status, e, nil)
	}
	if equality.Semantic.DeepEqual(policy.Status, updated.Status) {
		return nil
	}
	updated.Status.ObservedGeneration = updated.Generation
	if err := r.Client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("mcprollout/%s status for pool %s: %w", policy.Name, pool, err)
	}
	*policy = *updated
	return nil
}

// fillUnreadyPods adds each updated node's unready DaemonSet pods (the health gate only looks
// at updated nodes), from the pod cache indexed by node.
func (r *Reconciler) fillUnreadyPods(ctx context.Context, nodes []pacing.NodeState) error {
	for i := range nodes {
		if nodes[i].Progress != pacing.Updated {
			continue
		}
		var pods corev1.PodList
		if err := r.Client.List(ctx, &pods, client.MatchingFields{podNodeNameField: nodes[i].Name}, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("listing DaemonSet pods of node %s: %w", nodes[i].Name, err)
		}
		nodes[i].UnreadyDaemonSetPods = pacing.UnreadyDaemonSetPods(pods.Items)[nodes[i].Name]
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now().UTC()
	}
	return time.Now().UTC()
}

func contains(list []*rolloutv1.MachineConfigPoolRollout, p *rolloutv1.MachineConfigPoolRollout) bool {
	for _, q := range list {
		if q.Name == p.Name {
			return true
		}
	}
	return false
}

// PodCache is the manager's cache for pods when pacing is on: only DaemonSet pods (by the
// label their controller sets), stripped to what the health gate reads, so a large cluster's
// pods cost little memory.
func PodCache() (client.Object, cache.ByObject) {
	sel := labels.NewSelector()
	if req, err := labels.NewRequirement(pacing.DaemonSetPodLabel, selection.Exists, nil); err == nil {
		sel = sel.Add(*req)
	}
	return &corev1.Pod{}, cache.ByObject{Label: sel, Transform: stripPod}
}

func stripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var ready []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready, c)
		}
	}
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			Labels: pod.Labels, OwnerReferences: pod.OwnerReferences, DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Conditions: ready},
	}, nil
}
