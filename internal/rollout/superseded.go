package rollout

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// Superseded: the node was pointed at an older target that the pool has since replaced, and its
// agent has not begun to disrupt it for that target: no drain asked for (for any config: an
// agent may move on under a drain still in effect from an earlier target), nor the uncordon
// that follows an update to that target, no reboot queued, no failure. Such a node is already unavailable (it is
// not Done), so giving it the pool's target costs no capacity; and since the agent asks for its
// drain only while desiredConfig is still the config it planned, and reads the Node once more
// before its first write (internal/daemon, supersede.go), the node is drained and rebooted once,
// for the newer config, instead of once for each. An agent that has already asked for the drain
// finishes the older update first, as it always did. A rebootless update without a drain may
// already be writing when the node is moved: the agent finishes that transaction (the journal
// never leaves a node between configs) and then moves on, which costs no disruption either.
func Superseded(n *corev1.Node, target string) bool {
	return desired(n) != target && updateUnderway(n) && !disruptionBegun(n)
}

// updateUnderway: the node's agent has not reported it in its desired config yet, nor failed.
func updateUnderway(n *corev1.Node) bool {
	return desired(n) != "" && current(n) != desired(n) && !Degraded(n)
}

// disruptionBegun: the agent asked for a drain (for any config), or wrote its desired config
// and asks for the uncordon after it, or queued its reboot.
func disruptionBegun(n *corev1.Node) bool {
	drain := n.Annotations[protocol.DesiredDrainAnnotation]
	return strings.HasPrefix(drain, protocol.DrainRequest("")) || drain == protocol.UncordonRequest(desired(n)) ||
		n.Annotations[protocol.PostConfigActionAnnotation] != ""
}
