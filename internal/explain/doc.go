// Package explain is the pure core of `mco explain`: from a snapshot of what the API server
// holds (Nodes, pools, MachineConfigNodes, events, pacing policies) to what one node or pool
// is doing, why it is stuck or degraded, what mco does next and what the admin can do, with
// the evidence each statement rests on.
//
// It reads the same predicates the controllers decide by (internal/rollout), the same phase
// words `mco status` prints (internal/statusview) and the agent's and controllers' event
// reasons, so an explanation never contradicts what mco actually does. Every list it prints
// is bounded, so a 1,000-node pool still explains itself in a screen.
package explain
