// Package chaos rolls MachineConfigs across a dev cluster of real machines while faults are
// injected: the controller killed over and over, the API server and etcd stopped mid-rollout,
// agents killed at random, a node cut off the network in the middle of its update, a config
// that fails on one node and is then removed, a node lost for good, machines joining while the
// Machine Config Server is unreachable, a config that breaks the kubelet (reverted by the node's boot guard, rolled back by
// spec.onFailure: Rollback) under controller kills and an API server restart. An independent
// watcher records the most nodes unavailable or cordoned at once, and every rollout must end
// with every node on the target with exactly its files.
//
// `go test ./test/chaos/` runs one round of each but the long broken-kubelet one (part of
// `make test`); `make chaos` runs every fault (MCO_CHAOS_FAULTS=all, or names) and more rounds
// (MCO_CHAOS_ROUNDS), and MCO_CHAOS_SEED replays the random choices of an earlier run.
package chaos
