package render

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollback"
)

// followHold writes what the rollback decision needs besides the target: it removes the
// annotation a new render ended (only if the pool did not change since it was read, so an undo
// written meanwhile is decided again), and says so, or why a hold cannot be followed.
func (r *Reconciler) followHold(ctx context.Context, pool *mcfgv1.MachineConfigPool, hold rollback.Decision) error {
	if hold.Clear {
		patch := client.MergeFromWithOptions(pool.DeepCopy(), client.MergeFromWithOptimisticLock{})
		delete(pool.Annotations, rolloutv1.RollbackAnnotation)
		if err := r.Client.Patch(ctx, pool, patch); err != nil {
			return fmt.Errorf("ending the rollback of pool %s: %w", pool.Name, err)
		}
		r.Recorder.Event(pool, corev1.EventTypeNormal, ReasonRollbackEnded, hold.Condition.Message)
		return nil
	}
	if c := hold.Condition; c != nil && c.Status == corev1.ConditionTrue && c.Reason != rollback.ReasonHeld {
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonRollbackRefused, c.Message)
	}
	return nil
}

// targetOf is what spec.configuration should say for target: the render itself, or the earlier
// config a rollback holds the pool on, with the sources the pool last reported for it (its
// status, while it runs that config; none otherwise, since a rendered config does not list them).
func targetOf(pool *mcfgv1.MachineConfigPool, res *render.Result, target string) *render.Result {
	if target == res.Config.Name {
		return res
	}
	held := &mcfgv1.MachineConfig{}
	held.Name = target
	out := &render.Result{Config: held}
	if pool.Status.Configuration.Name == target {
		out.Sources = pool.Status.Configuration.Source
	}
	return out
}
