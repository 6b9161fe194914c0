package cluster

import "fmt"

// Layout is how a dev cluster's machines are built and mco comes onto them.
type Layout string

const (
	// LayoutOpenShift: machines boot by Ignition from mco's server (a bootstrap controller and
	// server on this host first, as OpenShift's bootstrap node), the first-boot service runs
	// before the kubelet, and mco is installed before the workers boot.
	LayoutOpenShift Layout = "openshift"
	// LayoutKubeadm: machines of a distribution image, provisioned without Ignition with what
	// `kubeadm join` and its packages leave on a node; mco is installed once the nodes are up.
	LayoutKubeadm Layout = "kubeadm"
)

// ParseLayout reads a --layout value; "" is the OpenShift layout.
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(s); l {
	case "":
		return LayoutOpenShift, nil
	case LayoutOpenShift, LayoutKubeadm:
		return l, nil
	}
	return "", fmt.Errorf("layout %q: want %q or %q", s, LayoutOpenShift, LayoutKubeadm)
}

// ClusterLayout is the layout a State records; clusters made before layouts existed are OpenShift's.
func (s *State) ClusterLayout() Layout {
	if s.Layout == "" {
		return LayoutOpenShift
	}
	return s.Layout
}
