package rollback

import (
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Undo is the rollback `mco rollout undo` writes on pool: from its target back to the config
// its nodes ran before, which is status.configuration while a rollout is in progress
// (spec.configuration differs from it), else the previous configuration the node controller
// recorded when the last rollout completed. It refuses, naming the pool and why, when there is
// nothing to return to, the rendered config is gone (exists), or a rollback already holds the pool.
func Undo(pool *mcfgv1.MachineConfigPool, exists func(string) bool, now time.Time) (rolloutv1.Rollback, error) {
	resume := fmt.Sprintf("`mco rollout resume mcp/%s`", pool.Name)
	if _, held := pool.Annotations[rolloutv1.RollbackAnnotation]; held {
		rb, err := Of(pool)
		if err != nil {
			return rolloutv1.Rollback{}, fmt.Errorf("%w; remove it with %s first", err, resume)
		}
		return rolloutv1.Rollback{}, fmt.Errorf("pool %s is already held on %s: %s; %s ends the hold", pool.Name, rb.To, Describe(rb), resume)
	}
	from, ran := pool.Spec.Configuration.Name, pool.Status.Configuration.Name
	if from == "" {
		return rolloutv1.Rollback{}, fmt.Errorf("pool %s has no rendered config yet (spec.configuration is empty): nothing to undo", pool.Name)
	}
	to, what := ran, "status.configuration, which every node ran before this rollout started"
	if ran == "" || ran == from {
		to = pool.Annotations[rolloutv1.PreviousConfigurationAnnotation]
		what = "its previous configuration (annotation " + rolloutv1.PreviousConfigurationAnnotation + ")"
		if to == "" {
			return rolloutv1.Rollback{}, fmt.Errorf("pool %s has no previous configuration to return to: no rollout of it is in progress and none completed since mco began recording it (annotation %s)",
				pool.Name, rolloutv1.PreviousConfigurationAnnotation)
		}
		if to == from {
			return rolloutv1.Rollback{}, fmt.Errorf("pool %s: its previous configuration %s is its target: nothing to undo", pool.Name, to)
		}
	}
	if !exists(to) {
		return rolloutv1.Rollback{}, fmt.Errorf("pool %s cannot return to %s, %s: that rendered config is not on the cluster", pool.Name, to, what)
	}
	return rolloutv1.Rollback{From: from, To: to, By: ByUndo, Reason: "undone by an admin", At: now.UTC().Format(time.RFC3339)}, nil
}
