package explain

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/rollback"
)

// rollbackHold is what a rollback holding a pool adds to its explanation.
type rollbackHold struct {
	Summary, Why, Next string
	YouCan             []string
}

// rolledBack explains a pool held on an earlier config by a rollback: which render was rolled
// back, by whom and why (the RolledBack condition the render controller wrote, or the
// annotation while it has not yet), and how the pool moves on. nil when none holds it.
func rolledBack(pool *mcfgv1.MachineConfigPool) *rollbackHold {
	cond := poolcondition.Get(&pool.Status, poolcondition.RolledBack)
	_, annotated := pool.Annotations[rolloutv1.RollbackAnnotation]
	if !annotated {
		return nil
	}
	resume := fmt.Sprintf("`mco rollout resume mcp/%s`", pool.Name)
	rb, err := rollback.Of(pool)
	switch {
	case err != nil:
		return &rollbackHold{Summary: "its rollback annotation is not valid", Why: bound(err.Error()),
			Next: "the pool keeps its target until the annotation is fixed or removed", YouCan: []string{"remove it: " + resume}}
	case cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == rollback.ReasonTargetMissing:
		return &rollbackHold{Summary: "its rollback cannot be followed", Why: bound("a rollback cannot be followed (RolledBack, " + cond.Reason + "): " + cond.Message),
			Next:   fmt.Sprintf("the pool keeps its target %s", orNone(pool.Spec.Configuration.Name)),
			YouCan: []string{"end the rollback: " + resume, "or change the pool's MachineConfigs: a new render ends it"}}
	}
	h := &rollbackHold{
		Summary: fmt.Sprintf("rolled back from %s by %s", rb.From, rb.By),
		Why:     bound("rolled back (RolledBack): " + rollback.HeldMessage(pool.Name, rb)),
		Next:    fmt.Sprintf("the pool stays on %s until its MachineConfigs change (a new render) or %s", rb.To, resume),
		YouCan: []string{
			fmt.Sprintf("fix or delete the MachineConfig that broke %s: the new render ends the hold and rolls out", rb.From),
			fmt.Sprintf("or move forward to %s as it is: %s (`mco plan --pool %s` first shows what that does)", rb.From, resume, pool.Name),
		},
	}
	if pool.Spec.Configuration.Name != rb.To {
		h.Why = bound(fmt.Sprintf("a rollback from %s to %s was asked (%s); the render controller has not pointed the pool back yet", rb.From, rb.To, rollback.Describe(rb)))
	}
	return h
}
