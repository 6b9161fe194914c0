package network

import (
	"fmt"
	"net/netip"
	"strconv"
)

// Layout is the dev cluster's address plan.
type Layout struct {
	// HostBridge carries HostAddr (MachineLink(i), the host's end of machine i's network
	// card, is named after it); PodBridgePrefix+i is machine i's pod bridge, inside the machine.
	HostBridge, PodBridgePrefix string
	// NodeNet holds HostAddr (its first address) and the machines' node addresses.
	NodeNet netip.Prefix
	// Services is the API server's --service-cluster-ip-range; Pods is split into one /24 per machine.
	Services, Pods netip.Prefix
	// Chain names this layout's iptables chains (so a test's layout never touches a cluster's).
	Chain string
}

// Default is the dev cluster's layout, Slot(0): the Service range is kubeadm's (the built-in
// kubelet configuration's clusterDNS, 10.96.0.10, is in it), the pod range flannel's default.
func Default() Layout { return Slot(0) }

// Slots is how many dev clusters can run on this host at once, each on a network of its own.
const Slots = 8

// Slot is the layout of the host's n-th dev network (0 <= n < Slots): its own bridges, chains
// and ranges (nodes 10.87.n.0/24, Services 10.(96+n).0.0/16, pods 10.(244+n).0.0/16), so that
// clusters on different slots (test/e2e's and test/chaos's, run side by side) share nothing.
func Slot(n int) Layout {
	l := Layout{
		HostBridge: "mco-dev" + strconv.Itoa(n), PodBridgePrefix: "mco-pods",
		NodeNet:  netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 87, byte(n), 0}), 24),
		Services: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(96 + n), 0, 0}), 16),
		Pods:     netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(244 + n), 0, 0}), 16),
		Chain:    "MCO-DEV",
	}
	if n > 0 {
		l.PodBridgePrefix = "mco" + strconv.Itoa(n) + "-pods"
		l.Chain += strconv.Itoa(n)
	}
	return l
}

// ClusterDNS is the address kubelets give pods as their DNS server (the Service range's tenth,
// kubeadm's choice): nothing answers there, and it is inside the blackholed Service range.
func (l Layout) ClusterDNS() netip.Addr { return addrAt(l.Services.Addr(), 10) }

// firstNode is the offset of machine 0's node address in NodeNet; below it, the host's own.
const firstNode = 10

// MaxMachines is how many machines a layout has addresses for.
func (l Layout) MaxMachines() int {
	nodes := (1 << (32 - l.NodeNet.Bits())) - firstNode - 1
	pods := 1 << (24 - l.Pods.Bits())
	return min(nodes, pods)
}

// HostAddr is this host's address on HostBridge.
func (l Layout) HostAddr() netip.Addr { return l.NodeNet.Addr().Next() }

// NodeAddr is machine i's node address (its kubelet listens there and reports it as InternalIP):
// the one address of its network card.
func (l Layout) NodeAddr(i int) netip.Addr { return addrAt(l.NodeNet.Addr(), firstNode+i) }

// PodCIDR is machine i's pod network.
func (l Layout) PodCIDR(i int) netip.Prefix {
	return netip.PrefixFrom(addrAt(l.Pods.Addr(), i<<8), 24)
}

// PodBridge is the bridge machine i's CNI puts its pods on, inside the machine (at most 15
// characters, Linux's limit).
func (l Layout) PodBridge(i int) string { return l.PodBridgePrefix + strconv.Itoa(i) }

// MachineLink is the host's end of machine i's network card.
func (l Layout) MachineLink(i int) string { return l.machineLinkPrefix() + strconv.Itoa(i) }

func (l Layout) machineLinkPrefix() string { return l.HostBridge + "m" }

// APIInt is the address machines reach the Machine Config Server at (the dev cluster's
// api-int load balancer): a virtual address this host translates to whichever server serves,
// the bootstrap server first, then the control-plane machine's (see PointAPIInt).
func (l Layout) APIInt() netip.Addr { return addrAt(l.NodeNet.Addr(), 2) }

// APIIntPort is the Machine Config Server's port on APIInt, OpenShift's.
const APIIntPort = 22623

// KubernetesService is the `kubernetes` Service's cluster IP: the API server gives it the
// Service range's first address.
func (l Layout) KubernetesService() netip.Addr { return l.Services.Addr().Next() }

// Validate refuses a layout whose parts overlap or do not fit in its address plan.
func (l Layout) Validate() error {
	if !l.Pods.Addr().Is4() || !l.Services.Addr().Is4() || !l.NodeNet.Addr().Is4() {
		return fmt.Errorf("dev network: only IPv4 ranges are supported")
	}
	if l.Pods.Bits() > 24 || l.NodeNet.Bits() > 28 {
		return fmt.Errorf("dev network: pod range %s must be /24 or wider, node range %s /28 or wider", l.Pods, l.NodeNet)
	}
	ranges := []netip.Prefix{l.NodeNet, l.Services, l.Pods}
	for i := range ranges {
		for j := i + 1; j < len(ranges); j++ {
			if ranges[i].Overlaps(ranges[j]) {
				return fmt.Errorf("dev network: ranges %s and %s overlap", ranges[i], ranges[j])
			}
		}
	}
	if last := l.MaxMachines() - 1; len(l.PodBridge(last)) > 15 || len(l.MachineLink(last)) > 15 {
		return fmt.Errorf("dev network: bridge names longer than 15 characters")
	}
	return nil
}

func addrAt(base netip.Addr, offset int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(offset)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
