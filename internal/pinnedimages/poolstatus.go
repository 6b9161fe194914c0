package pinnedimages

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonNodesFailed is the pool's PinnedImageSetsDegraded reason when nodes report sets they
// could not pull or pin (mco's; OpenShift's controller has only the populate failure, without a
// reason).
const ReasonNodesFailed = "PinnedImageSetsFailed"

// Synchronizer is the pool's status.poolSynchronizersStatus entry for PinnedImageSets, as
// OpenShift's node controller fills it: the machine, ready and unavailable counts are the pool's
// own, available the machines not unavailable, and updated the pool's MachineConfigNodes whose
// sets are all in place (Updated).
func Synchronizer(pool *mcfgv1.MachineConfigPool, mcns []mcfgv1.MachineConfigNode, sets []Set) mcfgv1.PoolSynchronizerStatus {
	st := mcfgv1.PoolSynchronizerStatus{
		PoolSynchronizerType:    mcfgv1.PinnedImageSets,
		MachineCount:            int64(pool.Status.MachineCount),
		ReadyMachineCount:       int64(pool.Status.ReadyMachineCount),
		UnavailableMachineCount: int64(pool.Status.UnavailableMachineCount),
		AvailableMachineCount:   int64(pool.Status.MachineCount - pool.Status.UnavailableMachineCount),
		ObservedGeneration:      pool.Generation,
	}
	for _, m := range mcns {
		if Updated(m.Status.PinnedImageSets, sets) {
			st.UpdatedMachineCount++
		}
	}
	// The schema's rules: no count above the machine count, ready not above available (a node
	// just joined may have an MCN before the pool counts it).
	st.UpdatedMachineCount = min(st.UpdatedMachineCount, st.MachineCount)
	st.ReadyMachineCount = min(st.ReadyMachineCount, st.AvailableMachineCount)
	return st
}

// Degraded is the pool's PinnedImageSetsDegraded condition: True, naming each node and what it
// reports, when one of the pool's MachineConfigNodes has PinnedImageSetsDegraded True (a set it
// could not pull or pin: the image and why), or when populateErr (the controller could not
// write the pool's sets); False otherwise.
func Degraded(mcns []mcfgv1.MachineConfigNode, populateErr error) (status metav1.ConditionStatus, reason, message string) {
	var nodes []string
	for _, m := range mcns {
		c := meta.FindStatusCondition(m.Status.Conditions, string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded))
		if c != nil && c.Status == metav1.ConditionTrue {
			nodes = append(nodes, fmt.Sprintf("Node %s reports: %s", m.Name, c.Message))
		}
	}
	slices.Sort(nodes)
	switch {
	case populateErr != nil:
		return metav1.ConditionTrue, "", populateErr.Error()
	case len(nodes) > 0:
		return metav1.ConditionTrue, ReasonNodesFailed, strings.Join(nodes, "; ")
	}
	return metav1.ConditionFalse, "", ""
}
