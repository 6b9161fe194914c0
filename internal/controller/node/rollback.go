package node

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/rollout"
)

// ReasonRolledBack is the Warning event on a pool whose policy's spec.onFailure: Rollback
// undid a failed rollout.
const ReasonRolledBack = "RolledBack"

// rollBackOnFailure writes the pool's rollback when its policy says spec.onFailure: Rollback
// and an update towards its target failed (rollback.OnFailure); the render controller then
// points the pool back at the config its nodes ran. The write carries the pool's
// resourceVersion, so it happens once: a second reconcile reading the same pool conflicts, one
// reading the written pool finds the annotation. It reports whether it wrote.
func (r *Reconciler) rollBackOnFailure(ctx context.Context, pool *mcfgv1.MachineConfigPool, members []*corev1.Node, p *paced, d rollout.Decision) (bool, error) {
	if p == nil || p.policy == nil || p.policy.Spec.OnFailure != rolloutv1.FailureRollback {
		return false, nil
	}
	rb := rollback.OnFailure(pool, rollback.Failure{Policy: p.policy.Name, Nodes: members, Unresponsive: d.Unresponsive, Gate: p.decision.GateFailed}, r.now())
	if rb == nil {
		return false, nil
	}
	written := pool.DeepCopy()
	if written.Annotations == nil {
		written.Annotations = map[string]string{}
	}
	written.Annotations[rolloutv1.RollbackAnnotation] = rollback.Encode(*rb)
	if err := r.Client.Patch(ctx, written, client.MergeFromWithOptions(pool, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("rolling back pool %s from %s to %s: %w", pool.Name, rb.From, rb.To, err)
	}
	r.Recorder.Eventf(pool, corev1.EventTypeWarning, ReasonRolledBack, "Rolling back from %s to %s (%s): %s", rb.From, rb.To, rb.By, rb.Reason)
	return true, nil
}

// recordPrevious writes the previous-configuration annotation when the decision moves the
// pool's status.configuration (rollback.Previous), before the status: a failed write is retried
// while the decision still completes. The pool then carries the written metadata, so the status
// write's optimistic lock holds; if anything else of the pool changed meanwhile the decision is
// stale, and the reconcile is retried instead.
func (r *Reconciler) recordPrevious(ctx context.Context, pool *mcfgv1.MachineConfigPool, d rollout.Decision) error {
	prev := rollback.Previous(pool, d.Completed)
	if prev == "" {
		return nil
	}
	written := pool.DeepCopy()
	if written.Annotations == nil {
		written.Annotations = map[string]string{}
	}
	written.Annotations[rolloutv1.PreviousConfigurationAnnotation] = prev
	if err := r.Client.Patch(ctx, written, client.MergeFrom(pool)); err != nil {
		return fmt.Errorf("recording the previous configuration %s of pool %s: %w", prev, pool.Name, err)
	}
	if !equality.Semantic.DeepEqual(written.Spec, pool.Spec) || !equality.Semantic.DeepEqual(written.Status, pool.Status) {
		return fmt.Errorf("pool %s changed while its previous configuration was recorded; deciding again", pool.Name)
	}
	pool.ObjectMeta = written.ObjectMeta
	return nil
}

// heldPhase makes the pacing entry of a pool held by a rollback say so: once every node is back
// (the pacing is Done), Phase RolledBack, naming the held-back render and why; while the undo
// runs, the pacing's own phase (a canary or soak of the undo is resumed as any other), its
// reason prefixed with the rollback.
func heldPhase(pool *mcfgv1.MachineConfigPool, p *paced) {
	rb := rollback.Holding(pool)
	if p == nil || rb == nil {
		return
	}
	switch p.decision.Phase {
	case rolloutv1.PhaseDone, rolloutv1.PhaseIdle:
		p.decision.Phase = rolloutv1.PhaseRolledBack
		p.decision.Reason = fmt.Sprintf("held on %s: %s; %s", rb.To, rollback.Describe(rb), p.decision.Reason)
	default:
		p.decision.Reason = fmt.Sprintf("rolling back from %s to %s (%s): %s", rb.From, rb.To, rb.By, p.decision.Reason)
	}
}
