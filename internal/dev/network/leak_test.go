package network

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/dev/machine"
)

// testLayout is a layout no dev cluster uses, so the test can run beside one.
func testLayout() Layout {
	return Layout{
		HostBridge: "mco-tst0", PodBridgePrefix: "mco-tpod",
		NodeNet:  netip.MustParsePrefix("10.187.0.0/24"),
		Services: netip.MustParsePrefix("10.196.0.0/16"),
		Pods:     netip.MustParsePrefix("10.254.0.0/16"),
		Chain:    "MCO-TST",
	}
}

// TestNothingLeavesTheHost makes the network, two machines in network namespaces of their own
// with their cards plugged in as their supervisor does, a pod on machine 0's pod bridge (as the
// machines' CNI does), and sends packets from the host, the machine and the pod to Service, pod
// and node addresses nothing answers for, and from the machine and the pod to an outside
// address. Counters on the interface of the host's default route must see none of them, while
// the pod and the machine reach the API server through the `kubernetes` Service, and the other
// machine and api-int at their addresses.
func TestNothingLeavesTheHost(t *testing.T) {
	if testing.Short() {
		t.Skip("needs root and the host's network (not -short)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the dev network test must run as root: it makes bridges, routes and iptables rules")
	}
	l := testLayout()
	out := defaultRouteDev(t)
	apiPort := freePort(t)
	t.Cleanup(func() {
		if err := Teardown(l); err != nil {
			t.Errorf("teardown: %v", err)
		}
		// Teardown again is harmless: `mco dev down` run twice, or over a network already gone.
		if err := Teardown(l); err != nil {
			t.Errorf("second teardown: %v", err)
		}
		// Nothing of the layout is left on the host.
		links, _ := exec.Command("ip", "link").Output()
		rules, _ := exec.Command("iptables-save").Output()
		routes, _ := exec.Command("ip", "route").Output()
		for what, s := range map[string]string{"link": string(links), "iptables rule": string(rules), "route": string(routes)} {
			for _, name := range []string{l.HostBridge, l.PodBridgePrefix, l.Chain, l.Services.String()} {
				if strings.Contains(s, name) {
					t.Errorf("after teardown, a %s still names %s", what, name)
				}
			}
		}
	})
	if err := Setup(l, apiPort); err != nil {
		t.Fatal(err)
	}
	// Setup again is harmless: a dev cluster restarted over a left network.
	if err := Setup(l, apiPort); err != nil {
		t.Fatalf("second setup: %v", err)
	}
	api, err := net.Listen("tcp", net.JoinHostPort(l.HostAddr().String(), strconv.Itoa(apiPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	accepted := clients(api)

	counter := countLeaks(t, l, out)
	m0, m1 := makeMachine(t, l, 0), makeMachine(t, l, 1)
	pod := makePod(t, l, 0, m0)

	// Machine 1 serves on its node address (as its kubelet does), and api-int leads to it (as
	// to the control-plane machine's server after the bootstrap).
	m1Port := freePort(t)
	served := listenIn(t, m1, netip.AddrPortFrom(l.NodeAddr(1), uint16(m1Port)))
	if err := PointAPIInt(l, netip.AddrPortFrom(l.NodeAddr(1), uint16(m1Port))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ who, ns, dst, from string }{
		{"machine 0", m0, net.JoinHostPort(l.NodeAddr(1).String(), strconv.Itoa(m1Port)), l.NodeAddr(0).String()},
		{"machine 0's pod", pod, net.JoinHostPort(l.NodeAddr(1).String(), strconv.Itoa(m1Port)), podAddr(l, 0)},
		{"machine 0 through api-int", m0, net.JoinHostPort(l.APIInt().String(), strconv.Itoa(APIIntPort)), l.NodeAddr(0).String()},
		// The machine api-int leads to, asking api-int itself, is answered through the host.
		{"machine 1 through api-int", m1, net.JoinHostPort(l.APIInt().String(), strconv.Itoa(APIIntPort)), l.HostAddr().String()},
	} {
		host, port, _ := net.SplitHostPort(c.dst)
		sh(t, c.ns, fmt.Sprintf("exec 3<>/dev/tcp/%s/%s", host, port))
		select {
		case from := <-served:
			if got, _, _ := net.SplitHostPort(from); got != c.from {
				t.Errorf("%s reached %s from %s, want %s", c.who, c.dst, got, c.from)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s never reached %s", c.who, c.dst)
		}
	}
	// Faults: machine 0 cut off reaches neither the API server nor machine 1, and both again once
	// connected; with the server down, api-int's port drops while machine 1's others answer.
	apiSvc := net.JoinHostPort(l.KubernetesService().String(), "443")
	toM1 := net.JoinHostPort(l.NodeAddr(1).String(), strconv.Itoa(m1Port))
	apiInt := net.JoinHostPort(l.APIInt().String(), strconv.Itoa(APIIntPort))
	for _, f := range []struct {
		name          string
		on, off       func() error
		refused, open []string
	}{
		{"machine 0 cut off", func() error { return CutOff(l, 0, true) }, func() error { return CutOff(l, 0, false) }, []string{apiSvc, toM1}, nil},
		{"the server down", func() error { return ServerDown(l, true) }, func() error { return ServerDown(l, false) }, []string{apiInt}, []string{toM1}},
	} {
		// Twice: a fault injected again is the same one, removed by one repair.
		for range 2 {
			if err := f.on(); err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
		}
		for _, dst := range f.refused {
			if connects(m0, dst) {
				t.Errorf("%s: machine 0 still reaches %s", f.name, dst)
			}
		}
		for _, dst := range f.open {
			if !connects(m0, dst) {
				t.Errorf("%s: machine 0 no longer reaches %s", f.name, dst)
			}
		}
		if err := f.off(); err != nil {
			t.Fatalf("%s, repaired: %v", f.name, err)
		}
		for _, dst := range f.refused {
			if !connects(m0, dst) {
				t.Errorf("%s, repaired: machine 0 does not reach %s", f.name, dst)
			}
		}
	}
	drain(accepted)
	drain(served)

	// The machine reaches the API server through the kubernetes Service, as hostNetwork pods do.
	sh(t, m0, fmt.Sprintf("exec 3<>/dev/tcp/%s/443", l.KubernetesService()))
	select {
	case from := <-accepted:
		if got, _, _ := net.SplitHostPort(from); got != l.NodeAddr(0).String() {
			t.Errorf("the API server saw %s, not machine 0", from)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("machine 0's connection to the kubernetes Service never reached the API server")
	}

	// The pod reaches the API server as in-cluster clients do.
	sh(t, pod, fmt.Sprintf("exec 3<>/dev/tcp/%s/443", l.KubernetesService()))
	select {
	case from := <-accepted:
		if got, _, _ := net.SplitHostPort(from); got != podAddr(l, 0) {
			t.Errorf("the API server saw %s, not the pod", from)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pod's connection to the kubernetes Service never reached the API server")
	}

	// ... and so do the host's own processes (hostNetwork pods).
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(l.KubernetesService().String(), "443"), 5*time.Second); err != nil {
		t.Fatalf("from the host, the kubernetes Service: %v", err)
	} else {
		c.Close()
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the host's connection to the kubernetes Service never reached the API server")
	}

	targets := []string{
		addrAt(l.Services.Addr(), 77).String(),   // a Service nothing implements
		addrAt(l.Pods.Addr(), 200<<8|5).String(), // a pod network no machine has
		addrAt(l.NodeNet.Addr(), 200).String(),   // a node address no machine has
		addrAt(l.PodCIDR(0).Addr(), 99).String(), // an address on the pod's own bridge nobody has
		"198.51.100.7",                           // outside (TEST-NET-2): pods must not reach it
	}
	for _, dst := range targets {
		// From the pod and the machine: UDP and a TCP attempt (bash's /dev/udp and /dev/tcp;
		// errors are expected).
		for _, ns := range []string{pod, m0} {
			shMayFail(ns, fmt.Sprintf("echo x > /dev/udp/%s/53; timeout 1 bash -c 'exec 3<>/dev/tcp/%s/80'", dst, dst))
		}
		if dst == "198.51.100.7" {
			continue // the host itself may reach the outside; only machines and pods may not
		}
		// From the host.
		if c, err := net.Dial("udp", net.JoinHostPort(dst, "53")); err == nil {
			_, _ = c.Write([]byte("x"))
			c.Close()
		}
		if r := routeGet(t, dst); strings.Contains(r, "dev "+out+" ") {
			t.Errorf("%s would follow the default route: %s", dst, r)
		}
	}
	if n := counter(); n != 0 {
		t.Fatalf("%d packets to or from the dev network's addresses left through %s", n, out)
	}
}

// countLeaks counts, on the way out of the default route's interface, every packet whose source
// or destination is in one of the layout's ranges.
func countLeaks(t *testing.T, l Layout, dev string) func() int {
	t.Helper()
	chain := l.Chain + "-LEAKS"
	must(t, "iptables", "-w", "-t", "mangle", "-N", chain)
	for _, p := range []netip.Prefix{l.NodeNet, l.Services, l.Pods} {
		must(t, "iptables", "-w", "-t", "mangle", "-A", chain, "-d", p.String())
		must(t, "iptables", "-w", "-t", "mangle", "-A", chain, "-s", p.String())
	}
	must(t, "iptables", "-w", "-t", "mangle", "-I", "POSTROUTING", "-o", dev, "-j", chain)
	t.Cleanup(func() {
		_ = exec.Command("iptables", "-w", "-t", "mangle", "-D", "POSTROUTING", "-o", dev, "-j", chain).Run()
		_ = exec.Command("iptables", "-w", "-t", "mangle", "-F", chain).Run()
		_ = exec.Command("iptables", "-w", "-t", "mangle", "-X", chain).Run()
	})
	return func() int {
		out, err := exec.Command("iptables", "-w", "-t", "mangle", "-L", chain, "-v", "-n", "-x").Output()
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, line := range strings.Split(string(out), "\n")[2:] {
			if f := strings.Fields(line); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				total += n
			}
		}
		return total
	}
}

// makeMachine is machine i's network as its supervisor leaves it: a network namespace of its own
// (a process's, as a booting machine's is) with its card plugged in. It returns the namespace's
// path.
func makeMachine(t *testing.T, l Layout, i int) string {
	t.Helper()
	init := exec.Command("unshare", "--net", "sleep", "600")
	if err := init.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = init.Process.Kill(); _ = init.Wait() })
	ns := fmt.Sprintf("/proc/%d/ns/net", init.Process.Pid)
	own, _ := os.Readlink("/proc/self/ns/net")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if theirs, _ := os.Readlink(ns); theirs != "" && theirs != own {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("unshare --net never made a network namespace")
		}
	}
	card := machine.Network{Link: l.MachineLink(i), Addr: l.NodeAddr(i), Gateway: l.HostAddr(), PodNet: l.PodCIDR(i)}
	if err := card.AttachNetwork(init.Process.Pid); err != nil {
		t.Fatal(err)
	}
	return ns
}

func podAddr(l Layout, i int) string { return addrAt(l.PodCIDR(i).Addr(), 5).String() }

// makePod is what the bridge CNI plugin makes for a pod of machine i, inside the machine's
// network namespace: the machine's pod bridge with the gateway address, and a network namespace
// on it with the default route through it.
func makePod(t *testing.T, l Layout, i int, machineNS string) string {
	t.Helper()
	name, bridge := "mco-tst-pod", l.PodBridge(i)
	gw := addrAt(l.PodCIDR(i).Addr(), 1).String()
	cleanup := func() { _ = exec.Command("ip", "netns", "del", name).Run() }
	cleanup()
	t.Cleanup(cleanup)
	must(t, "ip", "netns", "add", name)
	ns := "/run/netns/" + name
	inMachine := []string{"nsenter", "--net=" + machineNS, "--"}
	for _, c := range [][]string{
		append(inMachine, "ip", "link", "add", bridge, "type", "bridge"),
		append(inMachine, "ip", "addr", "add", gw+"/24", "dev", bridge),
		append(inMachine, "ip", "link", "set", bridge, "up"),
		append(inMachine, "ip", "link", "add", "mco-tst-veth", "type", "veth", "peer", "name", "eth0", "netns", ns),
		append(inMachine, "ip", "link", "set", "mco-tst-veth", "master", bridge, "up"),
		{"ip", "-n", name, "addr", "add", podAddr(l, i) + "/24", "dev", "eth0"},
		{"ip", "-n", name, "link", "set", "eth0", "up"},
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "-n", name, "route", "add", "default", "via", gw},
	} {
		must(t, c[0], c[1:]...)
	}
	return ns
}

// listenIn serves TCP on addr inside the network namespace ns, and sends each client's address.
func listenIn(t *testing.T, ns string, addr netip.AddrPort) <-chan string {
	t.Helper()
	made := make(chan error, 1)
	var l net.Listener
	go func() {
		// The thread joins ns and is never unlocked: Go ends it with this goroutine, so no other
		// goroutine runs in ns. The listening socket stays ns's.
		runtime.LockOSThread()
		f, err := os.Open(ns)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		if err == nil {
			l, err = net.Listen("tcp", addr.String())
		}
		made <- err
	}()
	if err := <-made; err != nil {
		t.Fatalf("listening on %s in %s: %v", addr, ns, err)
	}
	t.Cleanup(func() { l.Close() })
	return clients(l)
}

// clients accepts connections on l until it is closed, closes each, and sends its client's
// address.
func clients(l net.Listener) <-chan string {
	from := make(chan string, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			from <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	return from
}

func sh(t *testing.T, ns, script string) {
	t.Helper()
	if out, err := exec.Command("nsenter", "--net="+ns, "--", "timeout", "5", "bash", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("in %s: %s: %v: %s", ns, script, err, out)
	}
}

// connects says whether a TCP connection from the namespace ns to dst opens within 2 s.
func connects(ns, dst string) bool {
	host, port, _ := net.SplitHostPort(dst)
	return exec.Command("nsenter", "--net="+ns, "--", "timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port).Run() == nil
}

// drain empties a channel of accepted connections' addresses.
func drain(c <-chan string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func shMayFail(ns, script string) {
	_ = exec.Command("nsenter", "--net="+ns, "--", "timeout", "5", "bash", "-c", script).Run()
}

func routeGet(t *testing.T, dst string) string {
	out, _ := exec.Command("ip", "route", "get", dst).CombinedOutput()
	return strings.TrimSpace(string(out))
}

func defaultRouteDev(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "-j", "route", "show", "default").Output()
	if err != nil {
		t.Fatal(err)
	}
	var routes []Route
	if err := json.Unmarshal(out, &routes); err != nil || len(routes) == 0 {
		t.Fatalf("this host has no default route to watch (%v): %s", err, out)
	}
	return routes[0].Dev
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func must(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}
