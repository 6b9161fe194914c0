package rollback

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
)

// Reasons of the RolledBack condition.
const (
	ReasonHeld          = "RolledBack"
	ReasonTargetMissing = "RollbackTargetMissing"
	ReasonInvalid       = "InvalidRollback"
	ReasonNewRender     = "NewRender"
	ReasonEnded         = "Resumed"
)

// Decision is what the render controller makes true for a pool it rendered.
type Decision struct {
	// Target is the rendered config to point spec.configuration at; "" keeps the pool's target
	// as it is (a hold that cannot be followed never points the pool at a missing config, nor
	// moves it on to the render it holds back).
	Target string
	// Clear removes the rollback annotation: a new render ended the hold.
	Clear bool
	// Condition is the RolledBack condition to set; nil leaves it alone (a pool never held
	// has none, exactly as before the feature).
	Condition *Condition
}

// Condition is a RolledBack condition's fields.
type Condition struct {
	Status          corev1.ConditionStatus
	Reason, Message string
}

// Hold decides the render controller's target for pool, whose MachineConfigs render to
// rendered; exists says whether a rendered config of that name is on the cluster.
func Hold(pool *mcfgv1.MachineConfigPool, rendered string, exists func(string) bool) Decision {
	rb, err := Of(pool)
	resume := fmt.Sprintf("`mco rollout resume mcp/%s`", pool.Name)
	switch {
	case err != nil:
		keep := pool.Spec.Configuration.Name
		if keep == "" {
			keep = rendered
		}
		return Decision{Target: keep, Condition: &Condition{corev1.ConditionTrue, ReasonInvalid,
			fmt.Sprintf("%v; the pool keeps its target %s until the annotation is fixed or removed (%s)", err, keep, resume)}}
	case rb == nil:
		d := Decision{Target: rendered}
		if poolcondition.IsTrue(&pool.Status, poolcondition.RolledBack) {
			d.Condition = &Condition{corev1.ConditionFalse, ReasonEnded, fmt.Sprintf("no rollback holds the pool; it targets its newest render %s", rendered)}
		}
		return d
	case rb.From != rendered:
		return Decision{Target: rendered, Clear: true, Condition: &Condition{corev1.ConditionFalse, ReasonNewRender,
			fmt.Sprintf("the pool's MachineConfigs changed: %s replaces %s, so the hold on %s ended", rendered, rb.From, rb.To)}}
	case !exists(rb.To):
		return Decision{Condition: &Condition{corev1.ConditionTrue, ReasonTargetMissing,
			fmt.Sprintf("cannot hold on %s: it is not on the cluster; %s; the pool keeps its target %s; end the hold with %s or change its MachineConfigs",
				rb.To, Describe(rb), orNone(pool.Spec.Configuration.Name), resume)}}
	}
	return Decision{Target: rb.To, Condition: &Condition{corev1.ConditionTrue, ReasonHeld, HeldMessage(pool.Name, rb)}}
}

// HeldMessage is the RolledBack condition's message for a pool held by rb.
func HeldMessage(pool string, rb *rolloutv1.Rollback) string {
	return fmt.Sprintf("held on %s: %s; it moves forward when its MachineConfigs change or on `mco rollout resume mcp/%s`", rb.To, Describe(rb), pool)
}

// Holding is the pool's rollback when it is in effect: valid, and the pool targets its To.
func Holding(pool *mcfgv1.MachineConfigPool) *rolloutv1.Rollback {
	rb, err := Of(pool)
	if err != nil || rb == nil || pool.Spec.Configuration.Name != rb.To {
		return nil
	}
	return rb
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
