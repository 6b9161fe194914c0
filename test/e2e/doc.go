// Package e2e runs mco's real binaries (bin/mco controller, server, daemon) together against a
// real kube-apiserver and etcd, with the real Ignition client playing a booting machine.
package e2e
