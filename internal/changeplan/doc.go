// Package changeplan predicts what a change to a pool's MachineConfigs does to the pool's
// nodes before it is applied: the new rendered config, the disruption the node agent would
// choose (computed by internal/daemon/plan, the agent's own code), the unit, kernel-argument
// and file changes, and what the controller would refuse as unreconcilable. It is pure, but for
// ReadCluster, the one read of a cluster a live plan starts from: the callers (`mco plan`,
// `mco rollout undo`) read manifests, print the result (internal/planview) and write.
package changeplan
