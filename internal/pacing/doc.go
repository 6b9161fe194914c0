// Package pacing is the pure core of paced rollouts (api/rollout/v1alpha1): whether a
// maintenance window is open, when the next one opens, and Decide, which says how many more
// nodes of a pool may start now and why the rest waits. It does no I/O and reads the time
// only from its arguments, so every rule is table-tested on a fake clock.
//
// Where it plugs in (a later slice): the node controller (internal/controller/node) asks
// Decide before rollout.Decide picks nodes, and caps rollout's maxUnavailable budget by
// Decision.Start; nodes already started are never held back.
package pacing
