// Package node is the node controller: for every MachineConfigPool it points nodes at the
// pool's target rendered config, never more than maxUnavailable at a time, keeps the
// UpdateInProgress taint on nodes behind the target, and reports the pool's status (counts,
// status.configuration, Updated/Updating/NodeDegraded/DrainBlocked, Degraded).
//
// The decisions are internal/rollout's; this package reads the cache, calls rollout.Decide, and
// writes only what differs: one strategic-merge patch per node that needs a change, and at most
// one status patch per reconcile.
//
// The cache can lag the controller's own writes. Acting on a stale cache could target a node
// twice or, worse, target more nodes than maxUnavailable allows, so the fields this controller
// wrote are remembered until the cache shows them (see pending.go).
package node
