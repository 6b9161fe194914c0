// Package kubeletfiles reads a kubelet's configuration as the kubelet does: its drop-in
// directory and the order of the files there (DropInOrder), the configuration in effect from the
// base file and the drop-ins (Effective), whether a drop-in's settings are in effect (Satisfies)
// and which command-line flags override them (FlagsOverriding). The KubeletConfig generator
// (internal/kubeletconfig) writes the drop-in; the agent checks it against the running kubelet.
// Both import this leaf, so the agent does not link the generator.
package kubeletfiles

// The kubelet's drop-in directory and the one drop-in a KubeletConfig becomes on a pool without
// a base kubelet.conf. Kubernetes documents /etc/kubernetes/kubelet.conf.d as the example of
// --config-dir; the kubelet reads only files ending in .conf there, in lexical order, each over
// the previous ones (see Effective). 50- leaves room for the host's own drop-ins on both sides.
const (
	DropInDir  = "/etc/kubernetes/kubelet.conf.d"
	DropInPath = DropInDir + "/50-machineconfiguration.conf"
)
