package network

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestAddresses(t *testing.T) {
	l := Default()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{l.HostAddr().String(), "10.87.0.1"},
		{l.NodeAddr(0).String(), "10.87.0.10"},
		{l.NodeAddr(3).String(), "10.87.0.13"},
		{l.PodCIDR(0).String(), "10.244.0.0/24"},
		{l.PodCIDR(7).String(), "10.244.7.0/24"},
		{l.PodBridge(7), "mco-pods7"},
		{l.KubernetesService().String(), "10.96.0.1"},
		{l.APIInt().String(), "10.87.0.2"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	// The node range has room for 245 machines after the host's 10 addresses; the pod range for 256.
	if got := l.MaxMachines(); got != 245 {
		t.Errorf("MaxMachines = %d, want 245", got)
	}
}

// Slots are networks apart: two clusters on different slots share no bridge, chain or range,
// and slot 0 is the layout dev clusters had before slots.
func TestSlotsShareNothing(t *testing.T) {
	if Slot(0) != Default() {
		t.Fatalf("Slot(0) = %+v, want Default()", Slot(0))
	}
	if got := Default().ClusterDNS().String(); got != "10.96.0.10" {
		t.Errorf("slot 0's cluster DNS = %s, want kubeadm's 10.96.0.10", got)
	}
	seen := map[string]int{}
	for n := range Slots {
		l := Slot(n)
		if err := l.Validate(); err != nil {
			t.Fatalf("slot %d: %v", n, err)
		}
		if !l.Services.Contains(l.ClusterDNS()) {
			t.Errorf("slot %d: cluster DNS %s outside its Service range %s", n, l.ClusterDNS(), l.Services)
		}
		for _, name := range []string{l.HostBridge, l.PodBridge(0), l.Chain, l.machineLinkPrefix()} {
			if m, ok := seen[name]; ok {
				t.Errorf("slots %d and %d both use %s", m, n, name)
			}
			seen[name] = n
		}
		for m := range n {
			o := Slot(m)
			for _, a := range []netip.Prefix{l.NodeNet, l.Services, l.Pods} {
				for _, b := range []netip.Prefix{o.NodeNet, o.Services, o.Pods} {
					if a.Overlaps(b) {
						t.Errorf("slot %d's %s overlaps slot %d's %s", n, a, m, b)
					}
				}
			}
			if strings.HasPrefix(l.PodBridge(0), o.PodBridgePrefix) || strings.HasPrefix(o.PodBridge(0), l.PodBridgePrefix) {
				t.Errorf("slots %d and %d: pod bridge prefixes %s and %s: one's teardown would take the other's bridges", m, n, o.PodBridgePrefix, l.PodBridgePrefix)
			}
		}
	}
	if got := Slot(1).NodeAddr(0).String(); got != "10.87.1.10" {
		t.Errorf("slot 1's first machine is at %s, want 10.87.1.10", got)
	}
}

func TestValidateRefusesOverlaps(t *testing.T) {
	l := Default()
	l.Services = l.Pods
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("overlapping ranges: %v", err)
	}
}

func TestConflictsWith(t *testing.T) {
	l := Default()
	for _, c := range []struct {
		name   string
		routes []Route
		err    string
	}{
		{"a host with only its own network", []Route{{Dst: "default", Dev: "eth0"}, {Dst: "192.0.2.0/24", Dev: "eth0"}}, ""},
		{"what a previous run left", []Route{{Dst: "10.96.0.0/16", Type: "blackhole"}, {Dst: "10.244.3.0/24", Dev: "mco-pods3"}, {Dst: "10.87.0.0/24", Dev: "mco-dev0"}}, ""},
		{"a real network in the service range", []Route{{Dst: "10.96.0.0/12", Dev: "eth1"}}, "10.96.0.0/16 overlaps this host's route to 10.96.0.0/12 (dev eth1)"},
		{"a host route into the pod range", []Route{{Dst: "10.244.9.9", Dev: "tun0"}}, "10.244.0.0/16 overlaps"},
		{"a wide route containing the node range", []Route{{Dst: "10.0.0.0/8", Dev: "wg0"}}, "10.87.0.0/24 overlaps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := l.ConflictsWith(c.routes)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("got %v, want %q", err, c.err)
			}
		})
	}
}

func TestSetupCommandsLeadServiceToAPIServer(t *testing.T) {
	var dnat, blackholes []string
	for _, c := range Default().SetupCommands(6443) {
		line := strings.Join(c.Args, " ")
		if strings.Contains(line, "DNAT") {
			dnat = append(dnat, line)
		}
		if strings.Contains(line, "blackhole") {
			blackholes = append(blackholes, c.Args[len(c.Args)-1])
		}
	}
	if len(dnat) != 1 || !strings.Contains(dnat[0], "-d 10.96.0.1/32 -p tcp --dport 443 -j DNAT --to-destination 10.87.0.1:6443") {
		t.Errorf("DNAT rules: %q", dnat)
	}
	if strings.Join(blackholes, " ") != "10.87.0.0/24 10.96.0.0/16 10.244.0.0/16" {
		t.Errorf("blackholes: %q", blackholes)
	}
}

// api-int's port leads through its own chain, which starts empty (nothing serves until the
// bootstrap server does) and is replaced whole when the serving server changes.
func TestAPIIntChangesHands(t *testing.T) {
	l := Default()
	var jump []string
	for _, c := range l.SetupCommands(6443) {
		if line := strings.Join(c.Args, " "); strings.Contains(line, "-j MCO-DEV-API-INT") {
			jump = append(jump, line)
		}
	}
	if len(jump) != 1 || !strings.Contains(jump[0], "-A MCO-DEV-SERVICES -d 10.87.0.2/32 -p tcp --dport 22623 -j MCO-DEV-API-INT") {
		t.Errorf("jumps to api-int: %q", jump)
	}
	for target, want := range map[string][]string{
		// The control-plane machine's server: the machine asking api-int itself gets the
		// host's address as its source, so the answer comes back through the host.
		"10.87.0.10:22623": {
			"iptables -w -t nat -F MCO-DEV-API-INT",
			"iptables -w -t nat -A MCO-DEV-API-INT -p tcp -j DNAT --to-destination 10.87.0.10:22623",
			"iptables -w -t nat -F MCO-DEV-HAIRPIN",
			"iptables -w -t nat -A MCO-DEV-HAIRPIN -s 10.87.0.10/32 -d 10.87.0.10/32 -p tcp --dport 22623 -j SNAT --to-source 10.87.0.1",
		},
		// The bootstrap server, on the host: nothing to turn around.
		"10.87.0.1:30123": {
			"iptables -w -t nat -F MCO-DEV-API-INT",
			"iptables -w -t nat -A MCO-DEV-API-INT -p tcp -j DNAT --to-destination 10.87.0.1:30123",
			"iptables -w -t nat -F MCO-DEV-HAIRPIN",
		},
	} {
		var lines []string
		for _, c := range l.APIIntCommands(netip.MustParseAddrPort(target)) {
			lines = append(lines, strings.Join(c.Args, " "))
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("APIIntCommands(%s):\n%s\nwant\n%s", target, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	var torn []string
	for _, c := range l.TeardownCommands(nil) {
		if line := strings.Join(c.Args, " "); strings.Contains(line, "MCO-DEV-API-INT") {
			torn = append(torn, line)
		}
	}
	if len(torn) != 2 {
		t.Errorf("teardown of the api-int chain: %q", torn)
	}
}

// A machine's link is named after its slot's bridge, short enough for Linux in every slot.
func TestMachineLinks(t *testing.T) {
	if got := Slot(2).MachineLink(3); got != "mco-dev2m3" {
		t.Errorf("MachineLink(3) = %q", got)
	}
	if err := Slot(Slots - 1).Validate(); err != nil {
		t.Errorf("the last slot's names must fit: %v", err)
	}
}

// Teardown removes the machines' links before any rule or route that keeps their packets on this
// host: a machine still running must never meet the host's default route.
func TestTeardownCutsMachinesOffFirst(t *testing.T) {
	l := Default()
	cmds := l.TeardownCommands([]string{l.MachineLink(0), l.MachineLink(1)})
	firstRule := -1
	for i, c := range cmds {
		if c.Args[0] == "iptables" || slices.Contains(c.Args, "route") {
			firstRule = i
			break
		}
	}
	lastLink := -1
	for i, c := range cmds {
		if slices.Contains(c.Args, "link") && (slices.Contains(c.Args, l.MachineLink(0)) || slices.Contains(c.Args, l.MachineLink(1))) {
			lastLink = i
		}
	}
	if lastLink < 0 || firstRule < 0 || lastLink > firstRule {
		t.Errorf("machine links deleted at %d, first rule or route removed at %d: %q", lastLink, firstRule, cmds)
	}
}
