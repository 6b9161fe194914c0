package protocol

// Adoption of nodes mco did not boot (a kubeadm-built node, a node from a distribution image):
// such a node has no currentConfig and no first-boot record. mco only (OpenShift has no such
// nodes: every node boots from its Machine Config Server). The exchange, all on the Node:
//
//  1. The node controller offers the pool's target: AdoptionTargetAnnotation. This takes no
//     rollout capacity; nothing is written to the node.
//  2. The agent compares the host with that config. When the host already satisfies it, the
//     agent records it as the node's config and reports Done (currentConfig = desiredConfig =
//     the target): no drain, no reboot, no change to any file of the host. Otherwise it reports
//     AdoptionAnnotation = AdoptionPending and, in AdoptionPlanAnnotation, what adopting would
//     write, restart and reboot, and waits.
//  3. The admin approves: AdoptAnnotation = "true" on the Node, or on its pool for all of the
//     pool's nodes (`mco adopt`).
//  4. The node controller then treats the node as any node behind its pool's target: within
//     maxUnavailable it sets desiredConfig, and the agent updates the node as planned (drain,
//     write with every overwritten file's original kept, restart or reboot), then reports Done.
//     `mco daemon revert` returns such a node to the host's own files.
const (
	// AdoptionTargetAnnotation (node controller) is the rendered config the node would be
	// adopted into: its pool's target, set while the node has neither currentConfig nor
	// desiredConfig.
	AdoptionTargetAnnotation = prefix + "adoption-target"
	// AdoptionAnnotation (agent) is AdoptionPending while the host differs from the offered
	// config and the node waits for the admin; removed once the node is adopted.
	AdoptionAnnotation = prefix + "adoption"
	// AdoptionPlanAnnotation (agent) is the JSON of what adopting would do (internal/adoption
	// Plan): the files it would write with what differs, the units, the disruption.
	AdoptionPlanAnnotation = prefix + "adoption-plan"
	// AdoptAnnotation (admin) set to AdoptApproved on a Node or a MachineConfigPool lets the
	// node controller update a node waiting for adoption (every node of the pool). The node
	// controller removes a Node's once the node is Done, so that it does not approve a later
	// adoption (after `mco daemon revert`) in advance; a pool's stays.
	AdoptAnnotation = prefix + "adopt"
)

const (
	AdoptionPending = "Pending"
	AdoptApproved   = "true"
)
