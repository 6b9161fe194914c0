package network

import (
	"net/netip"
	"slices"
	"strconv"
)

// Command is one ip or iptables invocation; Exists says which of its failures mean it was in
// effect already (so Setup can run over a half-made network) or, for a teardown, gone already.
type Command struct {
	Args   []string
	Exists []string
	// Unless, when it succeeds, means the command's effect is there already (iptables -C).
	Unless []string
}

func ip(exists []string, args ...string) Command {
	return Command{Args: append([]string{"ip"}, args...), Exists: exists}
}

func iptables(exists []string, args ...string) Command {
	return Command{Args: append([]string{"iptables", "-w"}, args...), Exists: exists}
}

var (
	// What ip and iptables print when what a command makes is there already.
	alreadyThere = []string{"File exists", "Chain already exists", "Address already assigned"}
	// ... and when what a command removes is not there. iptables-nft (Debian's default) names a
	// missing chain "Chain 'X' does not exist" where iptables-legacy says "No chain/target/match".
	notThere = []string{"No such process", "Cannot find device", "does a matching rule exist", "No chain/target/match by that name", "No such file or directory", "Bad rule", "does not exist"}
)

func (l Layout) servicesChain() string { return l.Chain + "-SERVICES" }
func (l Layout) forwardChain() string  { return l.Chain + "-FORWARD" }
func (l Layout) apiIntChain() string   { return l.Chain + "-API-INT" }
func (l Layout) hairpinChain() string  { return l.Chain + "-HAIRPIN" }
func (l Layout) faultsChain() string   { return l.Chain + "-FAULTS" }

// SetupCommands make the network; apiPort is the API server's port on HostAddr, where the
// `kubernetes` Service's port 443 leads.
func (l Layout) SetupCommands(apiPort int) []Command {
	host := l.HostAddr().String()
	svc, fwd := l.servicesChain(), l.forwardChain()
	cmds := []Command{
		ip(alreadyThere, "link", "add", l.HostBridge, "type", "bridge"),
		ip(alreadyThere, "addr", "add", host+"/32", "dev", l.HostBridge),
		ip(nil, "link", "set", l.HostBridge, "up"),
	}
	// Blackholes: an address of these ranges that nothing here answers for goes nowhere, never
	// out of the default route. The routes the bridges add (node addresses are local, each pod
	// bridge's /24) are more specific and win.
	for _, p := range []string{l.NodeNet.String(), l.Services.String(), l.Pods.String()} {
		cmds = append(cmds, ip(alreadyThere, "route", "add", "blackhole", p))
	}
	// The host's own processes (hostNetwork pods: the agent) route before nat OUTPUT translates:
	// a blackholed destination fails connect() at once. The kubernetes Service's address goes to
	// the bridge instead, where nothing answers if the translation were ever missing.
	// So does api-int's: its translation (the API-INT chain) changes hands at the bootstrap's end.
	for _, a := range []string{l.KubernetesService().String(), l.APIInt().String()} {
		cmds = append(cmds, ip(alreadyThere, "route", "add", a+"/32", "dev", l.HostBridge))
	}
	cmds = append(cmds,
		iptables(alreadyThere, "-t", "nat", "-N", svc),
		iptables(nil, "-t", "nat", "-F", svc),
		iptables(nil, "-t", "nat", "-A", svc, "-d", l.KubernetesService().String()+"/32", "-p", "tcp", "--dport", "443",
			"-j", "DNAT", "--to-destination", host+":"+strconv.Itoa(apiPort)),
		iptables(alreadyThere, "-t", "nat", "-N", l.apiIntChain()),
		iptables(nil, "-t", "nat", "-F", l.apiIntChain()),
		iptables(nil, "-t", "nat", "-A", svc, "-d", l.APIInt().String()+"/32", "-p", "tcp", "--dport", strconv.Itoa(APIIntPort),
			"-j", l.apiIntChain()),
		iptables(alreadyThere, "-t", "nat", "-N", l.hairpinChain()),
		iptables(nil, "-t", "nat", "-F", l.hairpinChain()),
		// Network faults a test injects (CutOffCommands, ServerDownCommands) come before anything.
		iptables(alreadyThere, "-N", l.faultsChain()),
		iptables(nil, "-F", l.faultsChain()),
		iptables(alreadyThere, "-N", fwd),
		iptables(nil, "-F", fwd),
		iptables(nil, "-A", fwd, "-j", l.faultsChain()),
		// Between this cluster's machines and their pods: the host routes it (every machine
		// reaches the others through it), from one machine's link to another's.
		iptables(nil, "-A", fwd, "-i", l.machineLinkPrefix()+"+", "-o", l.machineLinkPrefix()+"+", "-j", "ACCEPT"),
		iptables(nil, "-A", fwd, "-s", l.Pods.String(), "-d", l.Pods.String(), "-j", "ACCEPT"),
		iptables(nil, "-A", fwd, "-s", l.Pods.String(), "-j", "DROP"),
		iptables(nil, "-A", fwd, "-d", l.Pods.String(), "-j", "DROP"),
		iptables(nil, "-A", fwd, "-d", l.Services.String(), "-j", "DROP"),
		iptables(nil, "-A", fwd, "-s", l.NodeNet.String(), "-j", "DROP"),
		iptables(nil, "-A", fwd, "-d", l.NodeNet.String(), "-j", "DROP"),
	)
	return append(cmds, l.jumps("-I")...)
}

// jumps are the rules that send the host's packets through this layout's chains.
func (l Layout) jumps(op string) []Command {
	exists := []string(nil)
	if op == "-D" {
		exists = notThere
	}
	var cmds []Command
	for _, j := range [][]string{
		{"-t", "nat", op, "PREROUTING", "-j", l.servicesChain()},
		{"-t", "nat", op, "OUTPUT", "-j", l.servicesChain()},
		{"-t", "nat", op, "POSTROUTING", "-j", l.hairpinChain()},
		{op, "FORWARD", "-j", l.forwardChain()},
		{op, "INPUT", "-j", l.faultsChain()},
		{op, "OUTPUT", "-j", l.faultsChain()},
	} {
		c := iptables(exists, j...)
		if op == "-I" {
			// Once: a setup over a network a previous run left must not add a second jump.
			check := slices.Clone(c.Args)
			check[slices.Index(check, op)] = "-C"
			c.Unless = check
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// APIIntCommands send api-int's connections to target, the Machine Config Server that serves
// now, as a load balancer's pool does: new connections go there, and established ones keep
// their translation (conntrack) until they close. A machine's connection to api-int that lands
// on the machine itself (the control-plane machine asking its own server) leaves the host with
// the host's address as its source: with its own, the answer would never come back through the
// host, whose translation the client expects it from.
func (l Layout) APIIntCommands(target netip.AddrPort) []Command {
	cmds := []Command{
		iptables(nil, "-t", "nat", "-F", l.apiIntChain()),
		iptables(nil, "-t", "nat", "-A", l.apiIntChain(), "-p", "tcp", "-j", "DNAT", "--to-destination", target.String()),
		iptables(nil, "-t", "nat", "-F", l.hairpinChain()),
	}
	if a := target.Addr(); a != l.HostAddr() && l.NodeNet.Contains(a) {
		cmds = append(cmds, iptables(nil, "-t", "nat", "-A", l.hairpinChain(), "-s", a.String()+"/32", "-d", a.String()+"/32",
			"-p", "tcp", "--dport", strconv.Itoa(int(target.Port())), "-j", "SNAT", "--to-source", l.HostAddr().String()))
	}
	return cmds
}

// TeardownCommands remove what SetupCommands made, and the links named in links (the
// machines' cards' host ends, which a machine's end takes with it, and pod bridges a machine
// sharing the host's network made: they would outlive it). The links go first: a machine still
// running (its supervisor killed) is cut off before the rules that keep its packets on this
// host are gone, never left with the host's default route open to it.
func (l Layout) TeardownCommands(links []string) []Command {
	var cmds []Command
	for _, b := range links {
		cmds = append(cmds, ip(notThere, "link", "del", b))
	}
	cmds = append(cmds, l.jumps("-D")...)
	for _, c := range []string{l.servicesChain(), l.apiIntChain(), l.hairpinChain()} {
		cmds = append(cmds, iptables(notThere, "-t", "nat", "-F", c), iptables(notThere, "-t", "nat", "-X", c))
	}
	for _, c := range []string{l.forwardChain(), l.faultsChain()} {
		cmds = append(cmds, iptables(notThere, "-F", c), iptables(notThere, "-X", c))
	}
	for _, p := range []string{l.NodeNet.String(), l.Services.String(), l.Pods.String()} {
		cmds = append(cmds, ip(notThere, "route", "del", "blackhole", p))
	}
	return append(cmds, ip(notThere, "link", "del", l.HostBridge))
}

// CutOffCommands cut machine i off the network (cut), as a pulled cable or a failed switch port
// would, or connect it again: every packet from or to its node address that passes the host (to
// the API server, to the other machines, their answers) is dropped; its card stays up, so its
// connections hang as they do in a real partition, rather than fail at once.
func (l Layout) CutOffCommands(i int, cut bool) []Command {
	node := l.NodeAddr(i).String() + "/32"
	return l.faultRules(cut, []string{"-s", node}, []string{"-d", node})
}

// ServerDownCommands make the Machine Config Server unreachable (down) or reachable again: every
// connection to api-int's port (whatever server it leads to) and to the server's port on any
// address of the layout (a machine's own) is dropped.
func (l Layout) ServerDownCommands(down bool) []Command {
	port := strconv.Itoa(APIIntPort)
	return l.faultRules(down,
		[]string{"-p", "tcp", "-m", "conntrack", "--ctorigdst", l.APIInt().String() + "/32", "--ctorigdstport", port},
		[]string{"-d", l.NodeNet.String(), "-p", "tcp", "--dport", port})
}

// faultRules add (on) or delete each rule of the faults chain, dropping what it matches; adding
// one that is there, or deleting one that is not, does nothing.
func (l Layout) faultRules(on bool, matches ...[]string) []Command {
	var cmds []Command
	for _, m := range matches {
		rule := append(append([]string{l.faultsChain()}, m...), "-j", "DROP")
		if on {
			c := iptables(nil, append([]string{"-A"}, rule...)...)
			c.Unless = append([]string{"iptables", "-w", "-C"}, rule...)
			cmds = append(cmds, c)
		} else {
			cmds = append(cmds, iptables(notThere, append([]string{"-D"}, rule...)...))
		}
	}
	return cmds
}
