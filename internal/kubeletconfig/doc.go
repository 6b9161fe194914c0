// Package kubeletconfig turns a KubeletConfig (machineconfiguration.openshift.io/v1) into its
// MachineConfig, 99-<pool>-generated-kubelet[-N]. On a pool with a base kubelet.conf (an
// OpenShift-templated one) it is OpenShift's, byte for byte: the user's kubeletConfig merged over
// the base the way OpenShift merges it (k8s.io/kubelet types, mergo with override, its special
// cases), the TLS profile, the log level drop-in and the node sizing environment file, encoded
// with the same encoders. On a pool without one (kubeadm-built) it is one kubelet drop-in
// holding only what the KubeletConfig says (dropin.go).
//
// It is a pure core: validation, the MachineConfig name for a pool, finding the pool's base
// kubelet.conf among its MachineConfigs, the generation itself and the status conditions are
// functions over values. The controller in internal/controller/kubeletconfig reads, calls them,
// and writes. How the kubelet reads its files (the drop-in paths, the configuration in effect,
// the flags over it) is internal/kubeletfiles, which the agent imports instead of this package.
//
// testdata/openshift holds golden outputs made by running OpenShift's own controller on
// documented inputs; see its README.
package kubeletconfig
