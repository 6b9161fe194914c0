// Package pacing keeps what belongs to a MachineConfigPoolRollout as a whole: its Valid
// condition (does the spec compile), observedGeneration, and the removal of entries for pools
// that are gone or no longer selected. Each pool's entry is the node controller's, written as
// it paces the pool (internal/controller/node/pacing.go).
package pacing
