package rollback

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Previous is the previous-configuration annotation to record on pool when a decision moves
// its status.configuration (completed): the config every node ran Done on before, its old
// status.configuration. "" when there is nothing to write (not completed, no earlier config,
// or already recorded), so a rollout costs one metadata write, not one per node or reconcile.
func Previous(pool *mcfgv1.MachineConfigPool, completed bool) string {
	before := pool.Status.Configuration.Name
	if !completed || before == "" || before == pool.Spec.Configuration.Name || pool.Annotations[rolloutv1.PreviousConfigurationAnnotation] == before {
		return ""
	}
	return before
}

// Needed are the rendered configs an undo of the pools needs, which garbage collection keeps:
// each pool's previous configuration, and both ends of each rollback (the held-back render
// comes back if its MachineConfigs render it again, but its name is what the hold compares).
func Needed(pools []mcfgv1.MachineConfigPool) sets.Set[string] {
	out := sets.New[string]()
	for i := range pools {
		p := &pools[i]
		out.Insert(p.Annotations[rolloutv1.PreviousConfigurationAnnotation])
		if rb, err := Of(p); err == nil && rb != nil {
			out.Insert(rb.From, rb.To)
		}
	}
	out.Delete("")
	return out
}
