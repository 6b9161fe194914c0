package bootguard

import (
	"time"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/pacing"
)

// Timeout is the node boot timeout of pool: spec.nodeBootTimeout of the one policy pacing it,
// else DefaultNodeBootTimeout, and where it comes from. The agent may not read pools, so the
// policy pacing the pool is the one whose status has an entry for it: the node controller
// writes that entry (pacing.Selecting over the pool's labels) before it starts any node of the
// pool. Two policies with an entry for it are a conflict that starts no node; the default then.
func Timeout(policies []rolloutv1.MachineConfigPoolRollout, pool string) (time.Duration, string) {
	var policy *rolloutv1.MachineConfigPoolRollout
	for i := range policies {
		if pacing.PoolEntry(&policies[i].Status, pool) == nil {
			continue
		}
		if policy != nil {
			return rolloutv1.DefaultNodeBootTimeout, "default"
		}
		policy = &policies[i]
	}
	if policy == nil || policy.Spec.NodeBootTimeout == nil || policy.Spec.NodeBootTimeout.Duration <= 0 {
		return rolloutv1.DefaultNodeBootTimeout, "default"
	}
	return policy.Spec.NodeBootTimeout.Duration, "mcprollout/" + policy.Name
}
