package explain

import (
	"context"
	"fmt"
	"slices"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/eviction"
)

// Snapshot reads what explaining an object needs from the API server: every pool and Node
// (membership, capacity and pacing depend on the others), MachineConfigNodes and policies
// where their CRDs are served, and the events about Nodes and pools (server-side filtered by
// kind, and by name when node is given). When node is draining, also its pods and the
// PodDisruptionBudgets of their namespaces (nodePods). The threshold is the node controller's
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
	if n := cl.node(node); n != nil && drainRunning(n) {
		np, err := nodePods(ctx, c, node)
		if err != nil {
			return cl, err
		}
		cl.NodePods = np
	}
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

// nodePods reads what a drain of node waits for: the pods on it (all namespaces, server-side
// field selector spec.nodeName) and the PodDisruptionBudgets of the namespaces of those the drain
// does not leave there, one list per namespace, so a user allowed only some namespaces' budgets
// is not refused for the others. A caller not allowed to list them still gets the rest of the
// explanation: NodePods.Unread says why they are missing.
func nodePods(ctx context.Context, c client.Reader, node string) (NodePods, error) {
	np := NodePods{Node: node}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		if apierrors.IsForbidden(err) {
			np.Unread = err.Error()
			return np, nil
		}
		return np, fmt.Errorf("listing pods of node %s: %w", node, err)
	}
	np.Pods = pods.Items
	var namespaces []string
	for i := range pods.Items {
		if p := &pods.Items[i]; eviction.Of(p, false) != eviction.Stays && !slices.Contains(namespaces, p.Namespace) {
			namespaces = append(namespaces, p.Namespace)
		}
	}
	slices.Sort(namespaces)
	for _, ns := range namespaces {
		var budgets policyv1.PodDisruptionBudgetList
		if err := c.List(ctx, &budgets, client.InNamespace(ns)); err != nil {
			if apierrors.IsForbidden(err) {
				return NodePods{Node: node, Unread: err.Error()}, nil
			}
			return np, fmt.Errorf("listing PodDisruptionBudgets of %s: %w", ns, err)
		}
		np.Budgets = append(np.Budgets, budgets.Items...)
	}
	return np, nil
}
