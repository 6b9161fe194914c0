package rollout

import (
	"fmt"
	"slices"
	"strings"

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
func computeStatus(pool *mcfgv1.MachineConfigPool, nodes []*corev1.Node, now metav1.Time) (mcfgv1.MachineConfigPoolStatus, bool) {
	st := *pool.Status.DeepCopy()
	target := pool.Spec.Configuration.Name
	st.ObservedGeneration = pool.Generation
	st.MachineCount = int32(len(nodes))
	st.UpdatedMachineCount, st.ReadyMachineCount, st.UnavailableMachineCount, st.DegradedMachineCount = 0, 0, 0, 0
	var degraded, blocked []*corev1.Node
	for _, n := range nodes {
		if UpdatedTo(n, target) {
			st.UpdatedMachineCount++
			if Ready(n) {
				st.ReadyMachineCount++
			}
		}
		if Unavailable(n) {
			st.UnavailableMachineCount++
		}
		if Degraded(n) {
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
		if pool.Spec.Paused {
			poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", fmt.Sprintf("Pool is paused; will not update to %s", target), now)
		} else {
			poolcondition.Set(&st, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "", fmt.Sprintf("All nodes are updating to MachineConfig %s", target), now)
		}
	}

	if len(degraded) > 0 {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionTrue,
			fmt.Sprintf("%d nodes are reporting degraded status on sync", len(degraded)),
			nameNodes(degraded, func(n *corev1.Node) string {
				return fmt.Sprintf("Node %s is reporting: %q", n.Name, n.Annotations[protocol.ReasonAnnotation])
			}), now)
	} else {
		poolcondition.Set(&st, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionFalse, "", "", now)
	}
	poolcondition.SetDegraded(&st, now)

	if len(blocked) > 0 {
		poolcondition.Set(&st, poolcondition.DrainBlocked, corev1.ConditionTrue,
			fmt.Sprintf("%d nodes have drains blocked", len(blocked)),
			nameNodes(blocked, func(n *corev1.Node) string {
				return fmt.Sprintf("Drain of node %s is blocked: %s", n.Name, n.Annotations[protocol.DrainBlockedAnnotation])
			}), now)
	} else {
		poolcondition.Set(&st, poolcondition.DrainBlocked, corev1.ConditionFalse, "", "", now)
	}
	return st, completed
}

// nameNodes joins one phrase per node, sorted by node name, naming at most maxNamedNodes.
func nameNodes(nodes []*corev1.Node, phrase func(*corev1.Node) string) string {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	var parts []string
	for _, n := range sorted[:min(len(sorted), maxNamedNodes)] {
		parts = append(parts, phrase(n))
	}
	if extra := len(sorted) - maxNamedNodes; extra > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", extra))
	}
	return strings.Join(parts, ", ")
}
