package node

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/protocol"
)

// drainForecast says, node by node, whether moving it from its current config to target may
// drain it: planned as its agent plans the move (changeplan, over the two rendered configs and
// the cluster's disruption policies), so a rollout that drains no node taints none. What it
// cannot plan (no current config, a rendered config or the policies unreadable, a move the
// agent would refuse) counts as a drain, and the node is tainted as OpenShift taints every
// node behind its pool's target. The agent may still drain where the forecast said no (a
// reboot left pending, drift): the taint only steers pods, so that costs at most a pod
// drained twice.
func (r *Reconciler) drainForecast(ctx context.Context, pool *mcfgv1.MachineConfigPool, target string) func(*corev1.Node) bool {
	drains := func(*corev1.Node) bool { return true }
	if target == "" {
		return drains
	}
	policies, err := changeplan.ClusterPolicies(ctx, r.Client)
	if err != nil {
		return drains
	}
	// Read-only, and a rendered config can be megabytes: no copy on every reconcile.
	next := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: target}, next, client.UnsafeDisableDeepCopy); err != nil {
		return drains
	}
	byCurrent := map[string]bool{}
	return func(n *corev1.Node) bool {
		current := n.Annotations[protocol.CurrentConfigAnnotation]
		if v, ok := byCurrent[current]; ok {
			return v
		}
		v := r.mayDrain(ctx, pool.Name, current, next, policies)
		byCurrent[current] = v
		return v
	}
}

func (r *Reconciler) mayDrain(ctx context.Context, pool, current string, next *mcfgv1.MachineConfig, policies changeplan.Policies) bool {
	if current == "" {
		return true
	}
	from := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: current}, from, client.UnsafeDisableDeepCopy); err != nil {
		return true
	}
	p, err := r.plans.Between(pool, from, next, policies)
	return err != nil || p.Drain || p.Reboot || len(p.Refused) > 0 || len(p.Unreconcilable) > 0
}
