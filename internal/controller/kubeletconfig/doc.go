// Package kubeletconfig is the controller for KubeletConfigs: for each one it writes the
// MachineConfig 99-<pool>-generated-kubelet[-N] of every pool its machineConfigPoolSelector
// matches (the render controller then merges it like any other MachineConfig), records the
// name suffix annotation and the generated names as finalizers, and reports OpenShift's
// Accepted condition. Deleting a KubeletConfig deletes its MachineConfigs, which restores the
// pool's base kubelet configuration. What to write is internal/kubeletconfig's decision; this
// package only reads, calls it and writes.
package kubeletconfig
