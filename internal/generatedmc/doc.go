// Package generatedmc is what the kubelet, container runtime and registries generators share:
// the Ignition config of a generated MachineConfig (overwriting files, encoded as OpenShift
// encodes it), the MachineConfig around it and how an existing one is updated to it, and where
// a generator's base file comes from (the pool's own MachineConfigs, never a generated one),
// which pools a machineConfigPoolSelector picks, and which name each object's MachineConfig
// takes on a pool.
package generatedmc
