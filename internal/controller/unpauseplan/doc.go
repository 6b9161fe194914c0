// Package unpauseplan is the unpause plan controller: a paused pool whose nodes do not all run
// its target rendered config carries the PendingUpdate condition saying what unpausing would
// do to them ("unpausing reboots 12 nodes: kernel argument audit=1").
//
// It groups the pool's members (internal/rollout's membership rule) by the rendered config they
// run, plans each group's move to the target with changeplan.Between under the cluster's
// NodeDisruptionPolicy (the node agent's own planner), and condenses the plans with
// changeplan.Unpausing. The node controller writes the rest of the pool's status and carries
// this condition over; this controller writes only its own condition, with an optimistic lock,
// and only when it changed. Node heartbeats do not reach it.
package unpauseplan
