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
func Superseded(n *corev1.Node, target string) bool { return superseded(n, configOf(n), target) }

func superseded(n *corev1.Node, c config, target string) bool {
	return c.desired != target && c.updateUnderway() && !disruptionBegun(n, c)
}

// updateUnderway: the node's agent has not reported it in its desired config yet, nor failed.
func (c config) updateUnderway() bool {
	return c.desired != "" && c.current != c.desired && !c.degraded()
}

// disruptionBegun: the agent asked for a drain (for any config), or wrote its desired config
// and asks for the uncordon after it, or queued its reboot.
func disruptionBegun(n *corev1.Node, c config) bool {
	drain := n.Annotations[protocol.DesiredDrainAnnotation]
	return strings.HasPrefix(drain, protocol.DrainRequest("")) || drain == protocol.UncordonRequest(c.desired) ||
		n.Annotations[protocol.PostConfigActionAnnotation] != ""
}
