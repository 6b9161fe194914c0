// Package plan is the pure core of a node update: what differs between two rendered
// MachineConfigs (Diff) and what the node must do about it (Plan), given the cluster's
// NodeDisruptionPolicy merged over mco's built-in defaults.
//
// No I/O: the node agent, and commands that only want to show what an update would do, call
// Compute with values they fetched themselves.
package plan
