package statusview

import (
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/pacing"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// PoolDrainPolicy is the spec.drain of the policy that paces pool, as the controllers apply it:
// the default (wait) without one, with two, or with an invalid one.
func PoolDrainPolicy(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) drainpolicy.Policy {
	policy, err := PolicyFor(policies, pool)
	if err != nil || policy == nil {
		return drainpolicy.Default()
	}
	compiled, err := pacing.Compile(policy.Spec)
	if err != nil {
		return drainpolicy.Default()
	}
	return compiled.Drain
}

// DrainStep says where the node's drain stands when it is blocked or was skipped, at now: the
// step (waiting, skip at T, delete pods at T, skipped at T and tried again after the rest of
// the pool), when the next comes and the policy field that brings it; "" otherwise. members
// are the pool's nodes: a skip comes only while another of them waits.
func DrainStep(n *corev1.Node, pool *mcfgv1.MachineConfigPool, members []*corev1.Node, policies []rolloutv1.MachineConfigPoolRollout, now time.Time) string {
	target := pool.Spec.Configuration.Name
	if s, ok := drainpolicy.Skipped(n); ok && s.Config == target && n.Annotations[protocol.DesiredConfigAnnotation] != target {
		return drainpolicy.DescribeSkipped(s)
	}
	b := drainpolicy.Read(n)
	if !b.Now() || !rollout.DrainingFor(n, target) {
		return ""
	}
	p := PoolDrainPolicy(policies, pool)
	return drainpolicy.Describe(p, b, drainpolicy.Decide(p, b, now, rollout.OthersWaiting(members, n.Name, target)), now)
}

// WithDrainSteps puts each blocked or skipped drain's step (DrainStep) in its node's Reason, after
// what the agent reported, for `mco status`.
func WithDrainSteps(rows []NodeRow, pools []mcfgv1.MachineConfigPool, nodes []corev1.Node, policies []rolloutv1.MachineConfigPoolRollout, now time.Time) []NodeRow {
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	members := map[string][]*corev1.Node{}
	for _, r := range rows {
		if n := byName[r.Name]; n != nil {
			members[r.Pool] = append(members[r.Pool], n)
		}
	}
	for i := range rows {
		n := byName[rows[i].Name]
		for j := range pools {
			if n == nil || pools[j].Name != rows[i].Pool {
				continue
			}
			if step := DrainStep(n, &pools[j], members[rows[i].Pool], policies, now); step != "" {
				if rows[i].Reason != "" {
					step = rows[i].Reason + "; " + step
				}
				rows[i].Reason = step
			}
		}
	}
	return rows
}
