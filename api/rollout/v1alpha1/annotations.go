package v1alpha1

// Annotations of mco's own, on OpenShift's objects. A cluster that sets none of them behaves
// exactly as before; each is readable and writable with kubectl.

// On a Node, set by an admin (`mco hold`, `mco node retry`) or by hand.
const (
	// HoldAnnotation = "true" holds a node back: it is never chosen for an update or an undo.
	// An update already started on it finishes. The pool is then neither Updated nor Degraded
	// for it: it reports the held nodes it waits for.
	HoldAnnotation = GroupName + "/hold"
	// UpdatePriorityAnnotation is an integer; nodes with a higher one are chosen first, equal
	// ones (and those without, which count as 0) in the usual order (zone, age, name).
	UpdatePriorityAnnotation = GroupName + "/update-priority"
	// RetryAnnotation is an RFC 3339 time (`mco node retry`): a node that reverted a broken
	// boot of its target tries that target again when this is newer than the revert.
	RetryAnnotation = GroupName + "/retry-requested-at"
)

// On a Node, written by mco's controllers.
const (
	// DrainSkippedAnnotation is JSON (SkippedDrain): the node's drain stayed blocked past the
	// policy's BlockedTimeout, so the node was returned to its current config and uncordoned;
	// it is chosen again once the pool's other nodes are on the target.
	DrainSkippedAnnotation = GroupName + "/drain-skipped"
	// DrainBlockedForAnnotation is how long, in whole seconds, the node's drains have been
	// blocked in all during this rollout (over every attempt), for DeleteBlockingPodsAfter.
	DrainBlockedForAnnotation = GroupName + "/drain-blocked-seconds"
	// TargetedAnnotation is "<rendered config> at <RFC 3339 time>": when the node controller gave
	// the node its desiredConfig, written in the same patch. The pool's UpdateStalled times a
	// node's update from it; the config in it keeps an earlier target's record from counting.
	TargetedAnnotation = GroupName + "/targeted"
)

// On a MachineConfigPool.
const (
	// RollbackAnnotation is JSON (Rollback): the pool is held on an earlier rendered config
	// instead of its newest render, by `mco rollout undo` or by spec.onFailure: Rollback. The
	// render controller points the pool at Rollback.To while the newest render is Rollback.From;
	// a new render (its MachineConfigs changed) or `mco rollout resume` ends the hold.
	RollbackAnnotation = GroupName + "/rollback"
	// PreviousConfigurationAnnotation names the rendered config every node of the pool ran
	// Done on before its current status.configuration: what `mco rollout undo` returns to
	// after a completed rollout. Written by the node controller when status.configuration moves.
	PreviousConfigurationAnnotation = GroupName + "/previous-configuration"
)

// Rollback is the value of RollbackAnnotation.
type Rollback struct {
	// From is the rendered config held back (the failed or undone one).
	From string `json:"from"`
	// To is the rendered config the pool is held on.
	To string `json:"to"`
	// By is who asked: "mco rollout undo" or "spec.onFailure of mcprollout/NAME".
	By string `json:"by"`
	// Reason says why, naming the failed node and its reason where there is one.
	Reason string `json:"reason,omitempty"`
	// At is when (RFC 3339).
	At string `json:"at"`
}

// SkippedDrain is the value of DrainSkippedAnnotation.
type SkippedDrain struct {
	// Config is the rendered config whose drain was blocked.
	Config string `json:"config"`
	// At is when the node was skipped (RFC 3339).
	At string `json:"at"`
	// Blocking names what refused the eviction (pods and PodDisruptionBudgets).
	Blocking string `json:"blocking,omitempty"`
}
