package machine

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Network is a machine's network card: on every boot the machine gets a network namespace of
// its own whose one interface, eth0, is a veth pair's end; the other end, Link, stays on the
// host. The machine has Addr alone (a /32) and reaches everything, the host and the other
// machines alike, through Gateway, the host's own address: the host routes between its machines
// (and to their pods, PodNet, through Addr) as a router does between point-to-point links, so
// its rules see every packet that leaves a machine, and no bridge's own filtering is in the way
// (with br_netfilter, a bridge hands a translated packet back to the port it came from only in
// hairpin mode). The supervisor plugs the card in as the firmware's network would, before the
// boot stage goes on; nothing inside the machine configures it. The host's routes go with the
// link when the machine's namespace ends: a machine that is off is not reachable.
type Network struct {
	Link    string       `json:"link"`
	Addr    netip.Addr   `json:"addr"`
	Gateway netip.Addr   `json:"gateway"`
	PodNet  netip.Prefix `json:"podNet,omitzero"`
}

// MachineInterface is the name of a machine's network interface inside it.
const MachineInterface = "eth0"

// Validate refuses a card the kernel would not take, before anything is made.
func (n Network) Validate() error {
	switch {
	case n.Link == "" || len(n.Link) > 15 || strings.ContainsAny(n.Link, "/ \t"):
		return fmt.Errorf("machine network: link name %q is not a Linux interface name (at most 15 characters, no / or space)", n.Link)
	case !n.Addr.Is4() || !n.Gateway.Is4() || n.Addr == n.Gateway:
		return fmt.Errorf("machine network: address %s and gateway %s must be two IPv4 addresses", n.Addr, n.Gateway)
	case n.PodNet.IsValid() && (!n.PodNet.Addr().Is4() || n.PodNet.Contains(n.Addr) || n.PodNet.Contains(n.Gateway)):
		return fmt.Errorf("machine network: pod network %s must be IPv4 and hold neither %s nor %s", n.PodNet, n.Addr, n.Gateway)
	}
	return nil
}

// HostCommands plug the card into the machine whose namespaces' first process is pid: the veth
// pair, its machine end moved into the machine's network namespace, and the host's routes to
// the machine and its pods through its end. A link left by a boot whose namespace has not gone
// yet is replaced first (see AttachNetwork).
func (n Network) HostCommands(pid int) [][]string {
	a := n.Addr.String()
	cmds := [][]string{
		{"ip", "link", "add", n.Link, "type", "veth", "peer", "name", MachineInterface, "netns", strconv.Itoa(pid)},
		{"ip", "link", "set", n.Link, "up"},
		{"ip", "route", "replace", a + "/32", "dev", n.Link, "scope", "link", "src", n.Gateway.String()},
	}
	if n.PodNet.IsValid() {
		cmds = append(cmds, []string{"ip", "route", "replace", n.PodNet.String(), "via", a, "dev", n.Link, "src", n.Gateway.String()})
	}
	return cmds
}

// MachineScript configures the machine's end, run inside its network namespace: loopback, the
// address, a link route to the gateway and the default route through it. Forwarding is on, as
// on any node whose pods' packets it routes (the CNI's bridge would turn it on too); ICMP
// redirects are ignored: every packet must keep passing the host.
func (n Network) MachineScript() string {
	a, g, i := n.Addr.String(), n.Gateway.String(), MachineInterface
	return strings.Join([]string{
		"set -e",
		"ip link set lo up",
		"ip addr add " + a + "/32 dev " + i,
		"ip link set " + i + " up",
		"ip route add " + g + " dev " + i + " scope link src " + a,
		"ip route add default via " + g + " dev " + i + " src " + a,
		"echo 1 >/proc/sys/net/ipv4/ip_forward",
		"echo 0 >/proc/sys/net/ipv4/conf/all/accept_redirects",
		"echo 0 >/proc/sys/net/ipv4/conf/" + i + "/accept_redirects",
	}, "\n")
}

// AttachNetwork plugs the card into the machine booting as pid. /proc/<pid>/ns/net names its
// namespace; nsenter runs the machine's end of the configuration inside it.
func (n Network) AttachNetwork(pid int) error {
	if err := n.Validate(); err != nil {
		return err
	}
	// A previous boot's veth goes with its namespace, which the kernel may free a moment after
	// that boot's last process: remove it rather than wait.
	_ = exec.Command("ip", "link", "del", n.Link).Run()
	for _, args := range n.HostCommands(pid) {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
	}
	cmd := exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(pid)+"/ns/net", "--", "sh", "-c", n.MachineScript())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("configuring %s of the machine (pid %d): %w: %s", MachineInterface, pid, err, bytes.TrimSpace(out))
	}
	return nil
}

// netReadyFD is the pipe on which the supervisor tells the boot stage its network card is in:
// "ok", or why not. It comes after bootFactsFD.
const netReadyFD = 4

// netReadyOK is the supervisor's message when the card is in.
const netReadyOK = "ok"

// waitNetwork blocks until the supervisor has plugged in the machine's network card: Ignition,
// the first thing that needs it, fetches its config over it.
func waitNetwork() error {
	f := os.NewFile(netReadyFD, "net-ready")
	if f == nil {
		return fmt.Errorf("the supervisor passed no network pipe (fd %d)", netReadyFD)
	}
	defer f.Close()
	msg, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return fmt.Errorf("waiting for the network: %w", err)
	}
	if s := string(msg); s != netReadyOK {
		if s == "" {
			s = "the supervisor closed the pipe"
		}
		return fmt.Errorf("no network: %s", s)
	}
	return nil
}
