package explain

import (
	"context"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Snapshot reads what explaining an object needs from the API server: every pool and Node
// (membership, capacity and pacing depend on the others), MachineConfigNodes and policies
// where their CRDs are served, and the events about Nodes and pools (server-side filtered by
// kind, and by name when node is given). The threshold is the node controller's
// --node-not-ready-threshold (0: its default).
func Snapshot(ctx context.Context, c client.Reader, node string, threshold time.Duration) (Cluster, error) {
	cl := Cluster{Now: time.Now(), NotReadyThreshold: threshold}
	var pools mcfgv1.MachineConfigPoolList
	if err := c.List(ctx, &pools); err != nil {
		return cl, fmt.Errorf("listing MachineConfigPools: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return cl, fmt.Errorf("listing Nodes: %w", err)
	}
	cl.Pools, cl.Nodes = pools.Items, nodes.Items
	var mcns mcfgv1.MachineConfigNodeList
	if err := c.List(ctx, &mcns); err != nil && !meta.IsNoMatchError(err) {
		return cl, fmt.Errorf("listing MachineConfigNodes: %w", err)
	}
	cl.MachineConfigNodes = mcns.Items
	var policies rolloutv1.MachineConfigPoolRolloutList
	if err := c.List(ctx, &policies); err != nil && !meta.IsNoMatchError(err) {
		return cl, fmt.Errorf("listing MachineConfigPoolRollouts: %w", err)
	}
	cl.Policies = policies.Items
	nodeEvents := client.MatchingFields{"involvedObject.kind": "Node"}
	if node != "" {
		nodeEvents["involvedObject.name"] = node
	}
	for _, sel := range []client.MatchingFields{nodeEvents, {"involvedObject.kind": "MachineConfigPool"}} {
		var events corev1.EventList
		if err := c.List(ctx, &events, sel); err != nil {
			return cl, fmt.Errorf("listing events: %w", err)
		}
		cl.Events = append(cl.Events, events.Items...)
	}
	return cl, nil
}
