package changeplan

import (
	"context"
	"fmt"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/plan"
)

// maxCachedPlans bounds a Cache; past it, it starts over. A cluster has a handful of rendered
// configs per pool in use at once.
const maxCachedPlans = 256

// Cache remembers plans by pool, the two rendered configs (name and resourceVersion, so even
// an edited rendered config is planned afresh) and the policy they were made under: a
// controller looking again on every node heartbeat must not diff Ignition configs again.
type Cache struct {
	mu    sync.Mutex
	plans map[cacheKey]*Plan
}

type cacheKey struct {
	pool, current, currentVersion, target, targetVersion, policy string
}

// Between is Between (both configs read, never nil), cached. Errors are not cached: they are
// cheap to find again and the caller reports them.
func (c *Cache) Between(pool string, current, target *mcfgv1.MachineConfig, p Policies) (*Plan, error) {
	key := cacheKey{pool, current.Name, current.ResourceVersion, target.Name, target.ResourceVersion, p.Key}
	c.mu.Lock()
	cached, ok := c.plans[key]
	c.mu.Unlock()
	if ok {
		return cached, nil
	}
	planned, err := Between(pool, current, target, p.Policies)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plans == nil || len(c.plans) >= maxCachedPlans {
		c.plans = map[cacheKey]*Plan{}
	}
	c.plans[key] = planned
	return planned, nil
}

// Policies are the cluster's update policies and a key that changes whenever they may have.
type Policies struct {
	plan.Policies
	Key string
}

// ClusterPolicies reads MachineConfiguration cluster, as the node agent does
// (plan.ClusterPolicies); without one, the defaults apply.
func ClusterPolicies(ctx context.Context, c client.Reader) (Policies, error) {
	p, mc, err := plan.ClusterPolicies(ctx, c)
	if err != nil || mc == nil {
		return Policies{Policies: p, Key: "defaults"}, err
	}
	return Policies{Policies: p, Key: fmt.Sprintf("%s/%d", mc.UID, mc.Generation)}, nil
}
