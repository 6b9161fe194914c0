package network

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestNothingLeavesTheHost makes the network, a pod on a pod bridge (as the machines' CNI does),
// and sends packets from the host and from the pod to Service, pod and node addresses nothing
// answers for, and from the pod to an outside address. Counters on the interface of the host's
// default route must see none of them, while the pod reaches the API server through the
// `kubernetes` Service.
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
	if err := AddNode(l, 0); err != nil {
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
	accepted := make(chan string, 4)
	go func() {
		for {
			c, err := api.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()

	counter := countLeaks(t, l, out)
	pod := makePod(t, l, 0)

	// The pod reaches the API server as in-cluster clients do.
	sh(t, pod, fmt.Sprintf("exec 3<>/dev/tcp/%s/443", l.KubernetesService()))
	select {
	case from := <-accepted:
		if !strings.HasPrefix(from, l.PodCIDR(0).Addr().String()[:len(l.PodCIDR(0).Addr().String())-1]) {
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
		// From the pod: UDP and a TCP attempt (bash's /dev/udp and /dev/tcp; errors are expected).
		shMayFail(pod, fmt.Sprintf("echo x > /dev/udp/%s/53; timeout 1 bash -c 'exec 3<>/dev/tcp/%s/80'", dst, dst))
		if dst == "198.51.100.7" {
			continue // the host itself may reach the outside; only pods may not
		}
		// From the host.
		if c, err := net.Dial("udp", net.JoinHostPort(dst, "53")); err == nil {
			_, _ = c.Write([]byte("x"))
			c.Close()
		}
		if r := routeGet(t, dst); strings.Contains(r, "dev "+out+" ") || strings.Contains(r, " via ") {
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

// makePod is what the bridge CNI plugin makes for a pod of machine i: the machine's pod bridge
// with the gateway address, and a network namespace on it with the default route through it.
func makePod(t *testing.T, l Layout, i int) string {
	t.Helper()
	ns, bridge := "mco-tst-pod", l.PodBridge(i)
	gw := addrAt(l.PodCIDR(i).Addr(), 1).String()
	addr := addrAt(l.PodCIDR(i).Addr(), 5).String()
	cleanup := func() {
		_ = exec.Command("ip", "netns", "del", ns).Run()
		_ = exec.Command("ip", "link", "del", "mco-tst-veth").Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	for _, c := range [][]string{
		{"ip", "link", "add", bridge, "type", "bridge"},
		{"ip", "addr", "add", gw + "/24", "dev", bridge},
		{"ip", "link", "set", bridge, "up"},
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", "mco-tst-veth", "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", "mco-tst-veth", "master", bridge, "up"},
		{"ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "route", "add", "default", "via", gw},
		// As the bridge plugin does.
		{"sysctl", "-qw", "net.ipv4.ip_forward=1"},
	} {
		must(t, c[0], c[1:]...)
	}
	return ns
}

func sh(t *testing.T, ns, script string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "exec", ns, "timeout", "5", "bash", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("in the pod: %s: %v: %s", script, err, out)
	}
}

func shMayFail(ns, script string) {
	_ = exec.Command("ip", "netns", "exec", ns, "timeout", "5", "bash", "-c", script).Run()
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
