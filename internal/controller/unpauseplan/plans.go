package unpauseplan

import (
	"context"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/daemon/plan"
)

// maxCachedPlans bounds the cache; past it, it starts over. A cluster has a handful of
// rendered configs per pool in use at once.
const maxCachedPlans = 256

// planCache remembers plans by the two rendered configs (name and resourceVersion, so even an
// edited rendered config is planned afresh) and the policy they were made under: a node
// heartbeat or a second paused pool's reconcile must not diff Ignition configs again.
type planCache struct {
	mu    sync.Mutex
	plans map[planKey]*changeplan.Plan
}

type planKey struct {
	current, currentVersion, target, targetVersion, policy string
}

func newPlanCache() *planCache { return &planCache{plans: map[planKey]*changeplan.Plan{}} }

// between is changeplan.Between, cached. Errors are not cached: they are cheap to find again
// and the message carries them.
func (c *planCache) between(pool string, current, target *mcfgv1.MachineConfig, policies plan.Policies, policy string) (*changeplan.Plan, error) {
	key := planKey{current.Name, current.ResourceVersion, target.Name, target.ResourceVersion, policy}
	c.mu.Lock()
	p, ok := c.plans[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := changeplan.Between(pool, current, target, policies)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.plans) >= maxCachedPlans {
		clear(c.plans)
	}
	c.plans[key] = p
	return p, nil
}

// policies reads MachineConfiguration cluster, as the node agent does (plan.ClusterPolicies).
func (r *Reconciler) policies(ctx context.Context) (plan.Policies, string, error) {
	p, mc, err := plan.ClusterPolicies(ctx, r.Client)
	if err != nil || mc == nil {
		return p, policyKey(nil), err
	}
	return p, policyKey(mc), nil
}
