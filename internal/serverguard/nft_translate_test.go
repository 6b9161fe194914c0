package serverguard

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// nsThread runs functions on one OS thread in a network namespace of its own.
type nsThread struct {
	tid  int
	work chan func()
}

func newNSThread(t *testing.T) *nsThread {
	t.Helper()
	th := &nsThread{work: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := unix.Unshare(unix.CLONE_NEWNET)
		if err == nil {
			err = loopbackUp()
		}
		th.tid = unix.Gettid()
		ready <- err
		if err != nil {
			return
		}
		for f := range th.work {
			f()
		}
	}()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(th.work) })
	return th
}

// do runs f in the thread's namespace and waits for it.
func (th *nsThread) do(f func()) {
	done := make(chan struct{})
	th.work <- func() { defer close(done); f() }
	<-done
}

// sh runs a command in the thread's namespace (a child forked from that thread inherits it).
func (th *nsThread) sh(t *testing.T, args ...string) {
	t.Helper()
	var out []byte
	var err error
	th.do(func() { out, err = exec.Command(args[0], args[1:]...).CombinedOutput() })
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// TestFirewallRefusesBeforeTranslation: a "node" and a "pod" in two network namespaces joined
// by a veth, the node translating an api-int-like address to its server's port (DNAT in
// prerouting, as the dev network and keepalived or kube-proxy setups do). The pod's connections
// to the server, at the node's address and at the translated one, are reset at once; another
// port still answers. (Rules on the input hook pass this too; on the dev network, whose host
// holds many more NAT rules, a reset from the input hook never reached the pod through api-int's
// DNAT: test/e2e checks that path on real machines.)
func TestFirewallRefusesBeforeTranslation(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root: it makes network namespaces and writes nftables in them (make test runs as root)")
	}
	for _, tool := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("needs %s (iproute2, iptables: .ci/run installs them): %v", tool, err)
		}
	}
	node, pod := newNSThread(t), newNSThread(t)
	node.sh(t, "ip", "link", "add", "node0", "type", "veth", "peer", "name", "pod0", "netns", fmt.Sprint(pod.tid))
	node.sh(t, "ip", "addr", "add", "10.1.0.1/24", "dev", "node0")
	node.sh(t, "ip", "link", "set", "node0", "up")
	node.sh(t, "iptables", "-t", "nat", "-A", "PREROUTING", "-d", "10.9.9.9/32", "-p", "tcp", "--dport", "22623",
		"-j", "DNAT", "--to-destination", "10.1.0.1:22623")
	pod.sh(t, "ip", "addr", "add", "10.1.0.2/24", "dev", "pod0")
	pod.sh(t, "ip", "link", "set", "pod0", "up")
	pod.sh(t, "ip", "route", "add", "default", "via", "10.1.0.1")
	node.do(func() { listen(t, "10.1.0.1:22623", "10.1.0.1:22625") })
	dial := func(addr string) (refused bool) {
		pod.do(func() { refused = refusedHere(t, addr) })
		return refused
	}
	if dial("10.9.9.9:22623") {
		t.Fatal("the translated address refused before any guard: the test's network is wrong")
	}

	node.do(func() {
		fw, err := Open(DefaultTable)
		if err != nil {
			t.Error(err)
			return
		}
		spec, err := Plan("node", []netip.Prefix{netip.MustParsePrefix("10.1.0.2/32")}, nil, []uint16{22623, 22624})
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := fw.Apply(spec); err != nil {
			t.Error(err)
		}
	})
	for addr, want := range map[string]bool{"10.1.0.1:22623": true, "10.9.9.9:22623": true, "10.1.0.1:22625": false} {
		if got := dial(addr); got != want {
			t.Errorf("a pod's connection to %s: refused=%v, want %v", addr, got, want)
		}
	}
}
