package changeplan

import (
	"context"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/scheme"
)

// ReadCluster lists what a live plan needs. MachineConfiguration cluster is optional, as it is
// for the agent (none, or no such kind served, means OpenShift's default policies), and so are
// MachineConfigPoolRollouts (the kind is not served on an install older than paced rollouts).
func ReadCluster(ctx context.Context, c client.Reader) (Cluster, error) {
	var out Cluster
	var pools mcfgv1.MachineConfigPoolList
	if err := c.List(ctx, &pools); err != nil {
		return out, fmt.Errorf("listing MachineConfigPools: %w", err)
	}
	var mcs mcfgv1.MachineConfigList
	if err := c.List(ctx, &mcs); err != nil {
		return out, fmt.Errorf("listing MachineConfigs: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return out, fmt.Errorf("listing Nodes: %w", err)
	}
	for i := range pools.Items {
		out.Pools = append(out.Pools, &pools.Items[i])
	}
	for i := range mcs.Items {
		out.MachineConfigs = append(out.MachineConfigs, &mcs.Items[i])
	}
	for i := range nodes.Items {
		out.Nodes = append(out.Nodes, &nodes.Items[i])
	}
	var err error
	if out.Policies, _, err = plan.ClusterPolicies(ctx, c); err != nil {
		return out, err
	}
	// Blocked and skipped drains are noted with their spec.drain step.
	var rollouts rolloutv1.MachineConfigPoolRolloutList
	if _, err := scheme.ListServed(ctx, c, &rollouts); err != nil {
		return out, fmt.Errorf("listing MachineConfigPoolRollouts: %w", err)
	}
	out.Rollouts = rollouts.Items
	out.Now = time.Now()
	return out, nil
}
