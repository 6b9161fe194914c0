// Package bootimage is the pure core of boot image management: given a MachineSet, the CoreOS
// stream metadata of the current release and the cluster's settings, it decides whether the
// MachineSet's providerSpec must point at a newer boot image (and computes the new providerSpec),
// or why the MachineSet is skipped. It also holds the small pieces of policy around that
// decision: which MachineSets are enrolled, the hot-loop guard, the upgrade of spec 2 pointer
// Ignition stubs and the status the controller reports.
//
// Nothing here talks to an API server; internal/controller/bootimage reads, calls these
// functions and writes.
package bootimage
