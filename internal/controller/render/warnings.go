package render

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/render"
)

// ReasonRenderWarnings is the event when the warnings of a pool's target change: Warning
// naming them, Normal once they are gone.
const ReasonRenderWarnings = "RenderWarnings"

// recordWarnings keeps the pool's RenderWarnings condition to the warnings of the render its
// target now is, and tells of a change by an event. The condition is the memory: an unchanged
// summary writes nothing and emits nothing, however often the pool is reconciled, and a write
// that fails (a conflict requeues) emits nothing either.
func (r *Reconciler) recordWarnings(ctx context.Context, pool *mcfgv1.MachineConfigPool, warnings []render.Warning) error {
	summary := render.SummarizeWarnings(warnings)
	before := pool.DeepCopy()
	if !poolcondition.SetRenderWarnings(&pool.Status, summary, metav1.Now()) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, pool, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording render warnings of pool %s: %w", pool.Name, err)
	}
	if summary == "" {
		r.Recorder.Event(pool, corev1.EventTypeNormal, ReasonRenderWarnings, "the pool's MachineConfigs render without warnings")
		return nil
	}
	r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonRenderWarnings, summary)
	return nil
}
