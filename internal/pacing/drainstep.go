package pacing

import (
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// PoolDrainPolicy is the spec.drain of the policy that paces pool, as the controllers apply it:
// the default (wait) without one, with two, or with an invalid one.
func PoolDrainPolicy(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) drainpolicy.Policy {
	selecting := Selecting(policies, pool)
	if len(selecting) != 1 {
		return drainpolicy.Default()
	}
	compiled, err := Compile(selecting[0].Spec)
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
