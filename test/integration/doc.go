// Package integration holds tests that cross components through a real kube-apiserver and etcd
// (internal/testenv). Per-controller integration tests live next to their controllers.
package integration
