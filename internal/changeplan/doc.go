// Package changeplan predicts what a change to a pool's MachineConfigs does to the pool's
// nodes before it is applied: the new rendered config, the disruption the node agent would
// choose (computed by internal/daemon/plan, the agent's own code), the unit, kernel-argument
// and file changes, and what the controller would refuse as unreconcilable. It is pure: the
// callers (`mco plan`) read manifests or the cluster and print the result.
package changeplan
