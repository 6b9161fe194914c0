package changeplan

import (
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollback"
)

// Undo is `mco rollout undo` of one pool, decided and planned.
type Undo struct {
	Rollback rolloutv1.Rollback
	// Before is the pool as read; After carries the rollback annotation: the write to make,
	// against Before's resourceVersion.
	Before, After *mcfgv1.MachineConfigPool
	// Report plans After as the render controller sees it once the annotation is written.
	Report *Report
}

// InProgress says whether the undo ends a rollout still in progress (back to the config every
// node ran before it), rather than one that completed (back to the previous configuration).
func (u *Undo) InProgress() bool { return u.Before.Status.Configuration.Name == u.Rollback.To }

// PlanUndo decides the undo of pool name in c at now (rollback.Undo) and plans the pool with
// its annotation written. It refuses what rollback.Undo refuses, and an undo a render would
// end at once: the pool's MachineConfigs render something newer than its target.
func PlanUndo(c Cluster, name string, now time.Time) (*Undo, error) {
	var pool *mcfgv1.MachineConfigPool
	for _, p := range c.Pools {
		if p.Name == name {
			pool = p
		}
	}
	if pool == nil {
		return nil, fmt.Errorf("mcp/%s: no such MachineConfigPool", name)
	}
	exists := map[string]bool{}
	for _, mc := range c.MachineConfigs {
		exists[mc.Name] = true
	}
	rb, err := rollback.Undo(pool, func(n string) bool { return exists[n] }, now)
	if err != nil {
		return nil, err
	}
	after := pool.DeepCopy()
	if after.Annotations == nil {
		after.Annotations = map[string]string{}
	}
	after.Annotations[rolloutv1.RollbackAnnotation] = rollback.Encode(rb)
	undone := c
	undone.Pools = make([]*mcfgv1.MachineConfigPool, len(c.Pools))
	for i, p := range c.Pools {
		undone.Pools[i] = p
		if p == pool {
			undone.Pools[i] = after
		}
	}
	report, err := Live(undone, Applied{}, name)
	if err != nil {
		return nil, err
	}
	if got := report.Pools[0].Rendered; got != rb.To {
		// The MachineConfigs render something newer than the pool's target (a render not
		// written yet, or one that fails): the hold would end, or not start, at once.
		if got == "" {
			got = "(none)"
		}
		return nil, fmt.Errorf("pool %s: its MachineConfigs now render %s, not its target %s, so an undo of %s would end as soon as the render controller renders them; see `mco plan --pool %s`",
			name, got, rb.From, rb.From, name)
	}
	return &Undo{Rollback: rb, Before: pool, After: after, Report: report}, nil
}
