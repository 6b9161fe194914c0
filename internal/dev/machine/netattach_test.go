package machine

import (
	"net/netip"
	"strings"
	"testing"
)

// The card's commands, at their exact command lines: the host's end and routes, and the
// machine's end configured inside it.
func TestNetworkCommands(t *testing.T) {
	n := Network{Link: "mco-dev2m3", Addr: netip.MustParseAddr("10.87.2.13"), Gateway: netip.MustParseAddr("10.87.2.1"),
		PodNet: netip.MustParsePrefix("10.246.3.0/24")}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range n.HostCommands(4242) {
		got = append(got, strings.Join(c, " "))
	}
	want := []string{
		"ip link add mco-dev2m3 type veth peer name eth0 netns 4242",
		"ip link set mco-dev2m3 up",
		"ip route replace 10.87.2.13/32 dev mco-dev2m3 scope link src 10.87.2.1",
		"ip route replace 10.246.3.0/24 via 10.87.2.13 dev mco-dev2m3 src 10.87.2.1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("HostCommands:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	script := n.MachineScript()
	for _, line := range []string{
		"ip addr add 10.87.2.13/32 dev eth0",
		"ip route add 10.87.2.1 dev eth0 scope link src 10.87.2.13",
		"ip route add default via 10.87.2.1 dev eth0 src 10.87.2.13",
		"echo 1 >/proc/sys/net/ipv4/ip_forward",
		"echo 0 >/proc/sys/net/ipv4/conf/all/accept_redirects",
	} {
		if !strings.Contains(script, line+"\n") {
			t.Errorf("the machine's script has no %q:\n%s", line, script)
		}
	}
	if !strings.HasPrefix(script, "set -e\n") {
		t.Error("the machine's script must stop at its first failure")
	}
	// Without a pod network, no route for one.
	n.PodNet = netip.Prefix{}
	if c := n.HostCommands(1); len(c) != 3 {
		t.Errorf("without a pod network: %q", c)
	}
}

func TestNetworkRefused(t *testing.T) {
	ok := Network{Link: "l", Addr: netip.MustParseAddr("10.0.0.2"), Gateway: netip.MustParseAddr("10.0.0.1")}
	for name, n := range map[string]Network{
		"no link":            {Addr: ok.Addr, Gateway: ok.Gateway},
		"link too long":      {Link: "a-link-name-too-long", Addr: ok.Addr, Gateway: ok.Gateway},
		"link with a slash":  {Link: "a/b", Addr: ok.Addr, Gateway: ok.Gateway},
		"no address":         {Link: "l", Gateway: ok.Gateway},
		"IPv6":               {Link: "l", Addr: netip.MustParseAddr("fd00::2"), Gateway: ok.Gateway},
		"gateway is itself":  {Link: "l", Addr: ok.Addr, Gateway: ok.Addr},
		"pods hold the node": {Link: "l", Addr: ok.Addr, Gateway: ok.Gateway, PodNet: netip.MustParsePrefix("10.0.0.0/24")},
	} {
		if err := n.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("a plain card: %v", err)
	}
}
