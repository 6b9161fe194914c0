// Package statusview turns pools, nodes and the MachineConfigPoolRollouts that pace them into
// what an admin reads: the tables of `mco status`, the live frame of `mco rollout status` and
// what `mco rollout resume` releases. Pure functions over API objects, but for the two reads
// every view starts from (read.go); the commands print and patch.
package statusview
