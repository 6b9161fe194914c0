// Package poolcondition reads and writes MachineConfigPool conditions. Conditions are API: the
// types are OpenShift's, so `kubectl get mcp` columns and existing alerts keep working.
//
//   - Updated: every node runs the pool's target config.
//   - Updating: the pool is moving nodes to a new target.
//   - RenderDegraded: the MachineConfigs do not render; the message names the failing one.
//   - NodeDegraded: at least one node failed to apply; the message names each node.
//   - NodeUnresponsive (mco only): a node went NotReady in the middle of an update and has not
//     been Ready for longer than the node controller's threshold; the message names each node
//     and the config it was moving to. No further nodes of the pool are started meanwhile.
//   - Degraded: RenderDegraded, NodeDegraded or NodeUnresponsive.
//   - DrainBlocked (mco only): a node's drain has been stuck longer than the drain controller's
//     threshold; the message names each node, the pods and the PodDisruptionBudgets blocking it.
//     Present once the node controller has reported a pool; not part of Degraded, since a drain
//     waiting for a budget is the budget working as intended.
//   - PendingUpdate (mco only): the pool is paused and some nodes do not run its target config;
//     the message says what unpausing would do to them ("unpausing reboots 12 nodes: kernel
//     argument audit=1"), the reason is the worst outcome (changeplan.Unpausing). Written by the
//     unpause plan controller; False once the pool is unpaused or nothing is pending.
//   - NodesAwaitingAdoption (mco only): nodes mco did not boot whose agents found that adopting
//     them into the pool's target changes their host, waiting for the admin's approval (or,
//     approved, for maxUnavailable); the message names each with what adopting would do and
//     how to approve. Written by the node controller; False when none waits. Not part of
//     Degraded: such nodes are not counted by the pool yet, and waiting for the admin is the
//     exchange working as designed.
//   - NodesHeld (mco only): nodes an admin holds back (`mco hold`) are not on the pool's target,
//     so the pool waits for them and is not Updated; the message names each with the config it
//     runs and how to release them. Written by the node controller, only once a pool has had a
//     held node (False after), so a cluster that holds none has no such condition. Not part of
//     Degraded: a hold is the admin's choice, not a failure.
//   - RenderWarnings (mco only): the MachineConfigs of the pool's target carry keys Ignition
//     only warns about (ignored, or read as the field they spell in another case); the message
//     names each MachineConfig, field, line and column. Written by the render controller; False
//     once they are gone; absent on a pool that never had any. Not part of Degraded: the pool
//     renders as OpenShift's would.
//   - UpdateStalled (mco only): a Ready node was given its target (rollout.mco.dev/targeted)
//     longer ago than the node controller's stall threshold and has not finished moving to it,
//     and nothing else reports why (not degraded, not NotReady, no drain blocked); the message
//     names each node with what its agent last reported ("has not started the update; is its
//     agent running?" when it never began). Written by the node controller, once a pool has had
//     a stalled node (False after). Not part of Degraded: nothing failed that the pool knows
//     of, but nothing moves either.
//   - RolledBack (mco only): the pool is held on an earlier rendered config instead of its
//     newest render (the rollout.mco.dev/rollback annotation, by `mco rollout undo` or a
//     policy's spec.onFailure: Rollback); the message names the held-back render, who rolled it
//     back and why, and how to move on. Written by the render controller; False once a new
//     render or `mco rollout resume` ended the hold; absent on a pool never held. Not part of
//     Degraded: the pool runs a config that worked.
package poolcondition

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DrainBlocked is the condition type mco adds for drains stuck on PodDisruptionBudgets.
const DrainBlocked mcfgv1.MachineConfigPoolConditionType = "DrainBlocked"

// PendingUpdate is the condition type mco adds to a paused pool saying what unpausing would do.
const PendingUpdate mcfgv1.MachineConfigPoolConditionType = "PendingUpdate"

// NodesAwaitingAdoption is the condition type mco adds for nodes it did not boot that wait for
// the admin's approval to be adopted.
const NodesAwaitingAdoption mcfgv1.MachineConfigPoolConditionType = "NodesAwaitingAdoption"

// UpdateStalled is the condition type mco adds for nodes that stopped moving to their target
// with no other reason reported.
const UpdateStalled mcfgv1.MachineConfigPoolConditionType = "UpdateStalled"

// RolledBack is the condition type mco adds to a pool held on an earlier rendered config.
const RolledBack mcfgv1.MachineConfigPoolConditionType = "RolledBack"

// NodesHeld is the condition type mco adds for held nodes the pool waits for.
const NodesHeld mcfgv1.MachineConfigPoolConditionType = "NodesHeld"

// NodeUnresponsive is the condition type mco adds for nodes that do not come back from an update.
const NodeUnresponsive mcfgv1.MachineConfigPoolConditionType = "NodeUnresponsive"

// Get returns the condition of type t, or nil.
func Get(status *mcfgv1.MachineConfigPoolStatus, t mcfgv1.MachineConfigPoolConditionType) *mcfgv1.MachineConfigPoolCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether condition t is present and True.
func IsTrue(status *mcfgv1.MachineConfigPoolStatus, t mcfgv1.MachineConfigPoolConditionType) bool {
	c := Get(status, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// Set adds or updates condition t. The transition time moves only when the status flips, so
// "Degraded since" stays meaningful across repeated reconciles. It reports whether anything
// changed, so callers can skip writes that would change nothing.
func Set(status *mcfgv1.MachineConfigPoolStatus, t mcfgv1.MachineConfigPoolConditionType, s corev1.ConditionStatus, reason, message string, now metav1.Time) bool {
	c := Get(status, t)
	if c == nil {
		status.Conditions = append(status.Conditions, mcfgv1.MachineConfigPoolCondition{
			Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: now,
		})
		return true
	}
	if c.Status == s && c.Reason == reason && c.Message == message {
		return false
	}
	if c.Status != s {
		c.LastTransitionTime = now
	}
	c.Status, c.Reason, c.Message = s, reason, message
	return true
}

// SetDegraded recomputes the summary Degraded condition from RenderDegraded, NodeDegraded and
// NodeUnresponsive, the first of them True in that order.
func SetDegraded(status *mcfgv1.MachineConfigPoolStatus, now metav1.Time) bool {
	for _, t := range []mcfgv1.MachineConfigPoolConditionType{mcfgv1.MachineConfigPoolRenderDegraded, mcfgv1.MachineConfigPoolNodeDegraded, NodeUnresponsive} {
		if c := Get(status, t); c != nil && c.Status == corev1.ConditionTrue {
			return Set(status, mcfgv1.MachineConfigPoolDegraded, corev1.ConditionTrue, c.Reason, c.Message, now)
		}
	}
	return Set(status, mcfgv1.MachineConfigPoolDegraded, corev1.ConditionFalse, "", "", now)
}
