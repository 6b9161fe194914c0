package drain

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/pacing"
	"github.com/mco-dev/mco/internal/rollout"
)

// nodePolicy is the spec.drain that applies to a node, and the MachineConfigPoolRollout it is
// from ("" for the default).
type nodePolicy struct {
	drainpolicy.Policy
	from string
}

// policyFor finds the drain policy of the node's pool: the spec.drain of the one
// MachineConfigPoolRollout selecting its primary pool (from the cache). Anything else (no
// pacing, no pool, no policy, two policies, an invalid one, which the node controller reports)
// is the default: keep waiting, never delete.
func (r *Reconciler) policyFor(ctx context.Context, node *corev1.Node) (nodePolicy, error) {
	def := nodePolicy{Policy: drainpolicy.Default()}
	if !r.Options.Pacing {
		return def, nil
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		return def, fmt.Errorf("listing pools: %w", err)
	}
	ptrs := make([]*mcfgv1.MachineConfigPool, len(pools.Items))
	for i := range pools.Items {
		ptrs[i] = &pools.Items[i]
	}
	name, err := rollout.PrimaryPool(node, ptrs)
	if err != nil || name == "" {
		return def, nil
	}
	var policies rolloutv1.MachineConfigPoolRolloutList
	if err := r.Client.List(ctx, &policies); err != nil {
		return def, fmt.Errorf("listing MachineConfigPoolRollouts: %w", err)
	}
	for _, pool := range ptrs {
		if pool.Name != name {
			continue
		}
		selecting := pacing.Selecting(policies.Items, pool)
		if len(selecting) != 1 {
			return def, nil
		}
		compiled, err := pacing.Compile(selecting[0].Spec)
		if err != nil {
			return def, nil
		}
		return nodePolicy{Policy: compiled.Drain, from: selecting[0].Name}, nil
	}
	return def, nil
}
