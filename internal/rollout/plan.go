package rollout

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// ZoneLabel orders candidates: one zone is finished before the next starts, so a zone-spread
// workload loses at most one zone's worth of capacity at a time.
const ZoneLabel = "topology.kubernetes.io/zone"

// Input is everything one decision about a pool needs.
type Input struct {
	Pool *mcfgv1.MachineConfigPool
	// Nodes are the pool's managed members (see Members).
	Nodes []*corev1.Node
	Now   metav1.Time
}

// Decision is what the node controller should make true for a pool.
type Decision struct {
	// Target is the rendered config the pool's nodes move to; "" while the render controller has
	// not set one yet, in which case nothing is targeted and only counts are reported.
	Target string
	// Next names the nodes to point at Target now, in the order they were chosen.
	Next []string
	// Status is the pool status to write: counts, configuration and the conditions this
	// controller owns; conditions other controllers own are carried over unchanged.
	Status mcfgv1.MachineConfigPoolStatus
	// Completed is true when this decision moves status.configuration to Target.
	Completed bool
	// Problems are pool misconfigurations worth an event (e.g. an unparsable maxUnavailable).
	Problems []string
}

// Decide chooses the next nodes to update and computes the pool's status. Next is computed
// first and the status from the nodes as they will be once Next is written, so the counts a
// watcher sees never lag the controller's own action.
func Decide(in Input) Decision {
	d := Decision{Target: in.Pool.Spec.Configuration.Name}
	limit, err := MaxUnavailable(in.Pool, len(in.Nodes))
	if err != nil {
		d.Problems = append(d.Problems, err.Error())
	}
	if d.Target != "" && !in.Pool.Spec.Paused {
		d.Next = nextNodes(in.Nodes, d.Target, limit)
	}
	after := in.Nodes
	if len(d.Next) > 0 {
		after = withDesired(in.Nodes, d.Next, d.Target)
	}
	d.Status, d.Completed = computeStatus(in.Pool, after, in.Now)
	return d
}

// MaxUnavailable is how many of n nodes may be unavailable at once: maxUnavailable as a count or
// a percentage of n rounded down, never less than 1 (so 0 and tiny percentages still make
// progress); 1 when unset or unparsable.
func MaxUnavailable(pool *mcfgv1.MachineConfigPool, n int) (int, error) {
	if pool.Spec.MaxUnavailable == nil {
		return 1, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(pool.Spec.MaxUnavailable, n, false)
	if err != nil {
		return 1, fmt.Errorf("pool %s: maxUnavailable %q is neither a count nor a percentage; using 1", pool.Name, pool.Spec.MaxUnavailable.String())
	}
	return max(v, 1), nil
}

// nextNodes applies the capacity rule. Nodes that are not Ready or are mid-update use up the
// limit, and so do nodes failing to reach this very target. Nodes failing towards an older
// target do not: otherwise one broken config would leave the pool stuck with no way to roll a
// fixed one onto the broken node.
func nextNodes(nodes []*corev1.Node, target string, limit int) []string {
	busy := 0
	var candidates []*corev1.Node
	for _, n := range nodes {
		switch {
		case !Ready(n) || (!Done(n) && !Failing(n)):
			busy++
		case Failing(n) && desired(n) == target:
			busy++
		}
		if desired(n) != target && Ready(n) {
			candidates = append(candidates, n)
		}
	}
	capacity := limit - busy
	if capacity <= 0 || len(candidates) == 0 {
		return nil
	}
	SortCandidates(candidates)
	var next []string
	for _, n := range candidates[:min(capacity, len(candidates))] {
		next = append(next, n.Name)
	}
	return next
}

// SortCandidates orders nodes zoned first (by zone name), then unzoned; within each, oldest
// first; the name breaks ties so the order is total.
func SortCandidates(nodes []*corev1.Node) {
	slices.SortStableFunc(nodes, func(a, b *corev1.Node) int {
		za, zb := a.Labels[ZoneLabel], b.Labels[ZoneLabel]
		switch {
		case (za == "") != (zb == ""):
			if za == "" {
				return 1
			}
			return -1
		case za != zb:
			return strings.Compare(za, zb)
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// withDesired returns nodes with the chosen ones' desiredConfig set to target (copies; the
// inputs stay untouched).
func withDesired(nodes []*corev1.Node, chosen []string, target string) []*corev1.Node {
	picked := make(map[string]bool, len(chosen))
	for _, name := range chosen {
		picked[name] = true
	}
	out := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		if picked[n.Name] {
			c := n.DeepCopy()
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[protocol.DesiredConfigAnnotation] = target
			out[i] = c
		}
	}
	return out
}
