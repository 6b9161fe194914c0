// Package devcluster runs a whole mco cluster on one machine, for the demo and end-to-end tests:
// etcd and kube-apiserver (built by `make tools`), the CRDs and built-in pools, `mco controller`,
// `mco server`, and simulated nodes (a Node object plus a real `mco daemon` on its own root
// directory). Every process is detached and recorded in DIR/state.json, so `mco dev up` returns
// while the cluster keeps running and `mco dev down` stops exactly what was started.
package cluster
