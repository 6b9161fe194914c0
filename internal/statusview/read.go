package statusview

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/scheme"
)

// ReadPoolsAndNodes lists every pool and Node: each view needs all of them, since a node's
// pool and a pool's counts depend on the others.
func ReadPoolsAndNodes(ctx context.Context, c client.Reader) ([]mcfgv1.MachineConfigPool, []corev1.Node, error) {
	var pools mcfgv1.MachineConfigPoolList
	if err := c.List(ctx, &pools); err != nil {
		return nil, nil, err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, nil, err
	}
	return pools.Items, nodes.Items, nil
}

// ReadPolicies lists the MachineConfigPoolRollouts; none, with served false, where the cluster
// does not serve the kind (an install older than paced rollouts).
func ReadPolicies(ctx context.Context, c client.Reader) (policies []rolloutv1.MachineConfigPoolRollout, served bool, err error) {
	var list rolloutv1.MachineConfigPoolRolloutList
	served, err = scheme.ListServed(ctx, c, &list)
	return list.Items, served, err
}
