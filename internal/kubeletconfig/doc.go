// Package kubeletconfig turns a KubeletConfig (machineconfiguration.openshift.io/v1) into the
// MachineConfig OpenShift generates for it, 99-<pool>-generated-kubelet[-N], byte for byte: the
// user's kubeletConfig merged over the pool's base kubelet configuration the way OpenShift
// merges it (k8s.io/kubelet types, mergo with override, its special cases), the TLS profile,
// the log level drop-in and the node sizing environment file, encoded with the same encoders.
//
// It is a pure core: validation, the MachineConfig name for a pool, finding the pool's base
// kubelet.conf among its MachineConfigs (or the built-in default for vanilla Kubernetes), the
// generation itself and the status conditions are functions over values. The controller in
// internal/controller/kubeletconfig reads, calls them, and writes.
//
// testdata/openshift holds golden outputs made by running OpenShift's own controller on
// documented inputs; see its README.
package kubeletconfig
