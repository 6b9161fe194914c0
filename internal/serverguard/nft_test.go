package serverguard

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// inNewNetns runs f on a thread of its own in a new network namespace (loopback up), so the
// test writes the kernel's real nftables without touching the host's. The thread is never
// given back: it ends with the goroutine.
func inNewNetns(t testing.TB, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("needs root: it makes a network namespace and writes nftables in it (make test runs as root)")
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		if err := loopbackUp(); err != nil {
			done <- err
			return
		}
		defer close(done)
		f()
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// refused says whether a TCP connection to addr is reset (the guard), and fails on any other
// outcome but a connection (a timeout: a reset that never reached the client).
func refused(t *testing.T, addr string) bool { return refusedHere(t, addr) }

func refusedHere(t *testing.T, addr string) bool {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return false
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want a connection or its refusal", addr, err)
	}
	return true
}

// TestFirewallRejectsThePodNetworkOnly: a "pod network" of 127.0.0.0/8 (loopback traffic passes
// prerouting too), with
// the server's port listening: a connection to it is reset, one to another port is not; the
// rules are written once, restored when someone deletes them, and removed whole.
func TestFirewallRejectsThePodNetworkOnly(t *testing.T) {
	inNewNetns(t, func() {
		if !listen(t, "127.0.0.1:22623", "127.0.0.1:22625") {
			return
		}
		if refused(t, "127.0.0.1:22623") {
			t.Error("refused before any guard")
		}
		fw, err := Open(DefaultTable)
		if err != nil {
			t.Error(err)
			return
		}
		spec, err := Plan("node-a", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil, []uint16{22623})
		if err != nil {
			t.Error(err)
			return
		}
		if changed, err := fw.Apply(spec); err != nil || !changed {
			t.Errorf("first apply: changed=%v err=%v, want a change", changed, err)
			return
		}
		if !refused(t, "127.0.0.1:22623") {
			t.Error("the guarded port answered a connection from the pod network")
		}
		if refused(t, "127.0.0.1:22625") {
			t.Error("another port was refused too")
		}
		if changed, err := fw.Apply(spec); err != nil || changed {
			t.Errorf("second apply: changed=%v err=%v, want nothing to do", changed, err)
		}
		if got, present, err := fw.Installed("node-a"); err != nil || !present || !slices.Equal(got, spec.Tags()) {
			t.Errorf("chain %s holds %q (present %v, err %v), want %q", ChainName("node-a"), got, present, err, spec.Tags())
		}

		// Someone flushes the chain (nft flush chain ...): the next apply restores it.
		conn, _ := nftables.New()
		conn.FlushChain(&nftables.Chain{Name: ChainName("node-a"), Table: fw.table})
		if err := conn.Flush(); err != nil {
			t.Error(err)
		}
		if refused(t, "127.0.0.1:22623") {
			t.Error("still refused after the chain was flushed: the test flushed nothing")
		}
		if changed, err := fw.Apply(spec); err != nil || !changed {
			t.Errorf("apply after the flush: changed=%v err=%v, want a change", changed, err)
		}
		if !refused(t, "127.0.0.1:22623") {
			t.Error("not restored")
		}

		// A second node's chains in the same table (hosts shared by several nodes).
		other, _ := Plan("node-b", []netip.Prefix{netip.MustParsePrefix("10.245.0.0/16")}, nil, []uint16{22623})
		if _, err := fw.Apply(other); err != nil {
			t.Error(err)
		}
		if err := fw.Remove("node-a"); err != nil {
			t.Error(err)
		}
		if refused(t, "127.0.0.1:22623") {
			t.Error("refused after the guard was removed")
		}
		if _, present, _ := fw.Installed("node-b"); !present {
			t.Error("node-b's chain went with node-a's")
		}
		if err := fw.Remove("node-b"); err != nil {
			t.Error(err)
		}
		if tables, _ := conn.ListTablesOfFamily(nftables.TableFamilyINet); slices.ContainsFunc(tables, func(tb *nftables.Table) bool { return tb.Name == DefaultTable }) {
			t.Error("the table outlived the last node's chains")
		}
		if err := fw.Remove("node-b"); err != nil {
			t.Errorf("removing what is gone: %v", err)
		}
	})
}

// listen accepts (and closes) connections on each address, in the calling thread's network
// namespace, until the test ends; false if one cannot be bound (reported).
func listen(t *testing.T, addrs ...string) bool {
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return false
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	return true
}

// BenchmarkApplyUnchanged is the agent's periodic check (every 30 s) when the rules are in
// place: read the node's chain and its rules over netlink, compare, write nothing.
func BenchmarkApplyUnchanged(b *testing.B) {
	inNewNetns(b, func() {
		fw, err := Open(DefaultTable)
		if err != nil {
			b.Error(err)
			return
		}
		spec, _ := Plan("node-a", []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd10::/48")}, nil, []uint16{22623, 22624})
		if _, err := fw.Apply(spec); err != nil {
			b.Error(err)
			return
		}
		b.ResetTimer()
		for range b.N {
			if changed, err := fw.Apply(spec); err != nil || changed {
				b.Errorf("changed=%v err=%v", changed, err)
				return
			}
		}
	})
}
