// Package containerruntime is the ContainerRuntimeConfig controller: for each
// ContainerRuntimeConfig it writes 99-<pool>-generated-containerruntime[-N] for every pool its
// machineConfigPoolSelector matches (internal/containerruntime decides the contents, byte for
// byte OpenShift's), records the name suffix and the MachineConfig names as finalizers, reports
// Success or Failure in its status as OpenShift does, deletes the MachineConfigs of pools it no
// longer selects, and all of them when it is deleted, which restores the pools' CRI-O defaults.
package containerruntime
