// Package generated writes the MachineConfigs a KubeletConfig or ContainerRuntimeConfig
// generates, one per selected pool: the name suffix and finalizers recorded on the object
// first, the MachineConfigs created or brought back to what the core computed, those of pools
// no longer selected deleted, and all of them deleted when the object is; and what wakes them
// (a pool, a generated MachineConfig edited or deleted, a possible base). The objects differ
// only in kind; what a MachineConfig should be is decided by the pure cores
// (internal/kubeletconfig, internal/containerruntime, internal/generatedmc).
package generated
