// Package containerruntime is the pure core of the ContainerRuntimeConfig controller: it
// validates a ContainerRuntimeConfig, turns it into the CRI-O drop-ins and storage.conf OpenShift
// writes (99-<pool>-generated-containerruntime, byte for byte as OpenShift's controller would for
// the same inputs), names that MachineConfig (the -N suffix rules for several configs on one
// pool) and computes the status. Its base storage.conf comes from the pool's own
// MachineConfigs, else a built-in default (docs/generated-configs.md).
package containerruntime
