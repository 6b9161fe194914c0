package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// maxNamedNodes bounds how many nodes a condition message names: a pool of thousands of
// degraded nodes must not produce a pool object bigger than etcd accepts.
const maxNamedNodes = 10

// computeStatus derives the pool's status from its members. It starts from the pool's current
// status so conditions owned by others (RenderDegraded) are kept, and reports whether
// status.configuration moved to the target.
func computeStatus(pool *mcfgv1.MachineConfigPool, nodes []*corev1.Node, lost []Unresponsive, threshold time.Duration, now metav1.Time) (mcfgv1.MachineConfigPoolStatus, bool) {
	st := *pool.Status.DeepCopy()
	target := pool.Spec.Configuration.Name
	st.ObservedGeneration = pool.Generation
	st.MachineCount = int32(len(nodes))
	st.UpdatedMachineCount, st.ReadyMachineCount, st.UnavailableMachineCount, st.DegradedMachineCount = 0, 0, 0, 0
	var degraded, blocked, held []*corev1.Node
	for _, n := range nodes {
		c, ready := configOf(n), Ready(n)
		if c.updatedTo(target) {
			st.UpdatedMachineCount++
			if ready {
				st.ReadyMachineCount++
			}
		}
		if Held(n) && c.desired != target {
			held = append(held, n)
		}
		if unavailable(ready, c) {
			st.UnavailableMachineCount++
		}
		if c.degraded() {
			st.DegradedMachineCount++
			degraded = append(degraded, n)
		}
		if n.Annotations[protocol.DrainBlockedAnnotation] != "" {
			blocked = append(blocked, n)
		}
	}
	if target == "" {
		return st, false
	}

	completed := false
	all := st.MachineCount
	if st.UpdatedMachineCount == all && st.ReadyMachineCount == all && st.UnavailableMachineCount == 0 {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionTrue, "", fmt.Sprintf("All nodes are updated with MachineConfig %s", target), now)
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", "", now)
		completed = st.Configuration.Name != target
		st.Configuration = pool.Spec.Configuration
	} else {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionFalse, "", "", now)
		switch {
		case pool.Spec.Paused:
			poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", fmt.Sprintf("Pool is paused; will not update to %s", target), now)
		case OnlyHeldBehind(nodes, target):
			// Nothing is moving: saying Updating would promise progress no one will make.
			poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", fmt.Sprintf("Only held nodes are not on MachineConfig %s; they update once released", target), now)
		default:
			poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "", fmt.Sprintf("All nodes are updating to MachineConfig %s", target), now)
		}
	}

	if len(degraded) > 0 {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionTrue,
			fmt.Sprintf("%d nodes are reporting degraded status on sync", len(degraded)),
			nameNodes(degraded, failingFirst, degradedPhrase)+remedy(degraded, target), now)
	} else {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionFalse, "", "", now)
	}
	setUnresponsive(&st, lost, threshold, now)
	poolcondition.SetDegraded(&st, now)

	if len(blocked) > 0 {
		poolcondition.Set(&st, poolcondition.DrainBlocked, corev1.ConditionTrue,
			fmt.Sprintf("%d nodes have drains blocked", len(blocked)),
			nameNodes(blocked, nil, func(n *corev1.Node) string {
				return fmt.Sprintf("Drain of node %s is blocked: %s", n.Name, n.Annotations[protocol.DrainBlockedAnnotation])
			}), now)
	} else {
		poolcondition.Set(&st, poolcondition.DrainBlocked, corev1.ConditionFalse, "", "", now)
	}
	setHeld(&st, held, now)
	return st, completed
}

// nameNodes joins one phrase per node, sorted by rank (when given) then name, naming at most
// maxNamedNodes.
func nameNodes(nodes []*corev1.Node, rank func(*corev1.Node) int, phrase func(*corev1.Node) string) string {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int {
		if rank != nil {
			if c := rank(a) - rank(b); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Name, b.Name)
	})
	parts := make([]string, len(sorted))
	for i, n := range sorted {
		parts[i] = phrase(n)
	}
	return boundedList(parts)
}

// boundedList joins parts, naming at most maxNamedNodes and counting the rest.
func boundedList(parts []string) string {
	if extra := len(parts) - maxNamedNodes; extra > 0 {
		parts = append(parts[:maxNamedNodes:maxNamedNodes], fmt.Sprintf("and %d more", extra))
	}
	return strings.Join(parts, ", ")
}

// degradedPhrase names the config a degraded node failed to reach (or is failing in) before its
// reason, so the pool alone says what broke.
func degradedPhrase(n *corev1.Node) string {
	reason := n.Annotations[protocol.ReasonAnnotation]
	if Failing(n) {
		return fmt.Sprintf("Node %s failed to update from %s to %s: %q", n.Name, orNone(current(n)), desired(n), reason)
	}
	return fmt.Sprintf("Node %s is degraded in %s: %q", n.Name, orNone(current(n)), reason)
}

// failingFirst ranks nodes that failed to reach a config before nodes degraded in theirs: the
// first phrase of the message is then the update that broke.
func failingFirst(n *corev1.Node) int {
	if Failing(n) {
		return 0
	}
	return 1
}

// remedy tells the admin what will get failed nodes going again.
func remedy(degraded []*corev1.Node, target string) string {
	for _, n := range degraded {
		if Failing(n) && desired(n) == target {
			return fmt.Sprintf(". To recover, fix or delete the MachineConfig that broke %s (or the node as its reason says); the failed nodes are moved to the pool's next rendered config automatically", target)
		}
	}
	return ""
}

func orNone(config string) string {
	if config == "" {
		return "no config"
	}
	return config
}
