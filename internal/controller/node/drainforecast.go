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
// drained twice. Nothing is read until a node behind the target is asked about, so a pool at
// rest costs nothing; each current config is planned once per reconcile (and the plan itself
// once per pair of configs, r.plans).
func (r *Reconciler) drainForecast(ctx context.Context, pool *mcfgv1.MachineConfigPool, target string) func(*corev1.Node) bool {
	var (
		read     bool
		policies changeplan.Policies
		next     *mcfgv1.MachineConfig
	)
	byCurrent := map[string]bool{}
	return func(n *corev1.Node) bool {
		if !read {
			read = true
			next = r.renderedConfig(ctx, target)
			var err error
			if policies, err = changeplan.ClusterPolicies(ctx, r.Client); err != nil {
				next = nil
			}
		}
		current := n.Annotations[protocol.CurrentConfigAnnotation]
		v, ok := byCurrent[current]
		if !ok {
			v = r.mayDrain(pool.Name, r.renderedConfig(ctx, current), next, policies)
			byCurrent[current] = v
		}
		return v
	}
}

// renderedConfig reads a rendered config from the cache without copying it (read-only, and
// one can be megabytes); nil if it cannot.
func (r *Reconciler) renderedConfig(ctx context.Context, name string) *mcfgv1.MachineConfig {
	if name == "" {
		return nil
	}
	mc := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return mc
}

func (r *Reconciler) mayDrain(pool string, from, next *mcfgv1.MachineConfig, policies changeplan.Policies) bool {
	if from == nil || next == nil {
		return true
	}
	p, err := r.plans.Between(pool, from, next, policies)
	return err != nil || p.Drain || p.Reboot || len(p.Refused) > 0 || len(p.Unreconcilable) > 0
}
