package machine

import (
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAttachNetwork is what plugging a machine's card in adds to each boot: the veth pair,
// the host's routes and the machine's end configured inside a fresh network namespace (a
// process's, as a booting machine's is). Needs root.
func BenchmarkAttachNetwork(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root (network namespaces, links, routes)")
	}
	n := Network{Link: "mco-bench0", Addr: netip.MustParseAddr("10.199.0.10"), Gateway: netip.MustParseAddr("10.199.0.1"),
		PodNet: netip.MustParsePrefix("10.199.128.0/24")}
	// The host's address for its machines, as the dev network's bridge holds it.
	for _, c := range [][]string{
		{"ip", "link", "add", "mco-bench-gw", "type", "bridge"},
		{"ip", "addr", "add", n.Gateway.String() + "/32", "dev", "mco-bench-gw"},
		{"ip", "link", "set", "mco-bench-gw", "up"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v: %s", c, err, out)
		}
	}
	b.Cleanup(func() { _ = exec.Command("ip", "link", "del", "mco-bench-gw").Run() })
	for b.Loop() {
		b.StopTimer()
		init := exec.Command("unshare", "--net", "sleep", "60")
		if err := init.Start(); err != nil {
			b.Fatal(err)
		}
		own, _ := os.Readlink("/proc/self/ns/net")
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if theirs, _ := os.Readlink("/proc/" + strconv.Itoa(init.Process.Pid) + "/ns/net"); theirs != "" && theirs != own {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("unshare --net never made a network namespace")
			}
		}
		b.StartTimer()
		err := n.AttachNetwork(init.Process.Pid)
		b.StopTimer()
		_ = init.Process.Kill()
		_ = init.Wait()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	_ = exec.Command("ip", "link", "del", n.Link).Run()
}
