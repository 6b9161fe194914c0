package render

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/controller/statuspatch"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/rollback"
)

// ReasonRenderWarnings is the event when the warnings of a pool's target change: Warning
// naming them, Normal once they are gone.
const ReasonRenderWarnings = "RenderWarnings"

// renderStatus is what one reconcile leaves in the pool's status: the conditions this
// controller owns. Reconcile computes it whole and writes it once (writeStatus).
type renderStatus struct {
	// failure is the RenderDegraded message of a render that failed; "" when it rendered.
	failure string
	// held is the rollback's RolledBack condition; nil leaves the condition as it is.
	held *rollback.Condition
	// warnings summarises the Ignition warnings of the render the target now is (RenderWarnings);
	// a failed render has none to say, and leaves the condition as it is.
	warnings string
}

// apply sets the conditions on status: RenderDegraded and the Degraded summary, RolledBack
// when held, RenderWarnings when rendered. It reports whether any changed, and whether
// RenderWarnings did (an event tells of that change).
func (s renderStatus) apply(status *mcfgv1.MachineConfigPoolStatus, now metav1.Time) (changed, warningsChanged bool) {
	if s.failure != "" {
		changed = poolcondition.Set(status, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionTrue, ReasonRenderFailed, s.failure, now)
	} else {
		changed = poolcondition.Set(status, mcfgv1.MachineConfigPoolRenderDegraded, corev1.ConditionFalse, "", "", now)
	}
	changed = poolcondition.SetDegraded(status, now) || changed
	if s.held != nil {
		changed = poolcondition.Set(status, poolcondition.RolledBack, s.held.Status, s.held.Reason, s.held.Message, now) || changed
	}
	if s.failure == "" {
		warningsChanged = poolcondition.SetRenderWarnings(status, s.warnings, now)
	}
	return changed || warningsChanged, warningsChanged
}

// writeStatus is the reconcile's one status write: s over the pool as last read or written,
// patched only when something changed. The optimistic lock keeps it from overwriting
// conditions the node controller wrote in between; a conflict requeues. The RenderWarnings
// condition is the memory of what was told: a change is told by an event only once written,
// so an unchanged summary, or a write that failed, emits nothing.
func (r *Reconciler) writeStatus(ctx context.Context, pool *mcfgv1.MachineConfigPool, s renderStatus) error {
	before := pool.DeepCopy()
	changed, warningsChanged := s.apply(&pool.Status, metav1.Now())
	if !changed {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, pool, statuspatch.MergeFrom(before)); err != nil {
		return fmt.Errorf("writing the render status of pool %s: %w", pool.Name, err)
	}
	switch {
	case !warningsChanged:
	case s.warnings == "":
		r.Recorder.Event(pool, corev1.EventTypeNormal, ReasonRenderWarnings, "the pool's MachineConfigs render without warnings")
	default:
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonRenderWarnings, s.warnings)
	}
	return nil
}
