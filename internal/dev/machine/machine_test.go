package machine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/dev/machine/metadata"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestMachineLifecycle boots a real systemd machine from a user-data Ignition config, reboots
// it into a staged image and command line, cuts its power, and powers it off.
func TestMachineLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a real machine: needs root, the ignition binary and bin/mco")
	}
	if os.Geteuid() != 0 {
		t.Fatal("machines need root (namespaces, loop mounts); run the tests as root")
	}
	mco := testenv.RequireMCO(t)
	ign := testenv.RequireTool(t, "ignition")
	base := t.TempDir()
	for p := base; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	images := filepath.Join(base, "images")
	for _, ref := range []string{"test.local/os:1", "test.local/os:2"} {
		if err := BuildImage(images, ref, mco, map[string]string{"/usr/lib/mco-dev/flavour": ref + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	c := Config{Name: "m0", Dir: filepath.Join(base, "m0"), ImagesDir: images, Image: "test.local/os:1",
		Ignition: ign, MCO: mco, DiskSize: 256 << 20, Hide: []string{base},
		Metadata: metadata.Metadata{Name: "m0", Labels: map[string]string{"role": "test"}}}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	userData := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/hello","mode":420,"contents":{"source":"data:,from%20ignition"}}]},` +
		`"systemd":{"units":[{"name":"hello.service","enabled":true,"contents":"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]}}`
	if err := os.WriteFile(filepath.Join(c.Dir, UserDataFile), []byte(userData), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sup := exec.Command(mco, "dev", "machine", "supervise", "--dir", c.Dir)
	sup.Stdout, sup.Stderr = os.Stderr, os.Stderr
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	supDone := make(chan error, 1)
	go func() { supDone <- sup.Wait() }()
	t.Cleanup(func() {
		if err := Stop(c.Dir, PoweroffGrace); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(c.Dir, ConsoleFile))
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("console:\n%s", data)
		}
	})
	in := func(args ...string) string {
		t.Helper()
		out, err := Output(ctx, c.Dir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	waitBoot := func(boots int) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			st, err := ReadStatus(c.Dir)
			if err == nil && st.Boots == boots && st.State == Running {
				if state, err := WaitSystemRunning(ctx, c.Dir, time.Minute); err != nil || state != "running" {
					t.Fatalf("boot %d: systemd is %q: %v (failed units: %s)", boots, state, err, in("systemctl", "--failed", "--no-legend"))
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("boot %d never came up: %+v %v", boots, st, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	waitBoot(1)
	if got := in("cat", "/etc/hello"); got != "from ignition" {
		t.Fatalf("/etc/hello = %q: Ignition did not provision the root before the first boot", got)
	}
	if got := in("systemctl", "is-active", "hello.service"); got != "active" {
		t.Fatalf("hello.service, enabled by Ignition, is %s", got)
	}
	if got := in("hostname"); got != "m0" {
		t.Fatalf("hostname %q", got)
	}
	if got := in("cat", "/proc/1/comm"); got != "systemd" {
		t.Fatalf("PID 1 is %q", got)
	}
	if got := in("cat", osimage.DevBootedImagePath); got != "test.local/os:1" {
		t.Fatalf("booted image %q", got)
	}
	if got := in("cat", "/proc/cmdline"); got != DefaultCmdline {
		t.Fatalf("cmdline %q", got)
	}
	if got := in("sh", "-c", "test -e "+base+"/m0/disk.img && echo visible || echo hidden"); got != "hidden" {
		t.Fatalf("the host's machine directory is %s inside the machine", got)
	}
	if got := in("sh", "-c", "test -e /etc/machine-config-daemon/noorig/etc/hello.mcdnoorig && echo recorded"); got != "recorded" {
		t.Fatal("the first boot did not record that /etc/hello had no original")
	}
	checkKubeletReady(t, c, in)
	// A shutdown whose stop jobs hang ends in a forced reboot after 2 min, not 30.
	if got := in("systemctl", "show", "reboot.target", "-p", "JobTimeoutUSec", "-p", "JobTimeoutAction"); got != "JobTimeoutUSec=2min\nJobTimeoutAction=reboot-force" {
		t.Fatalf("reboot.target's job bound: %q", got)
	}
	// A container's scope (runc's name under containerd's CRI) is stopped within 10 s, not 90,
	// even when systemd misses that it emptied: its processes get SIGKILL 10 s after SIGTERM.
	if got := in("sh", "-c", `systemd-run --scope --unit=cri-containerd-mco-test sh -c 'trap "" TERM; sleep 600' >/dev/null 2>&1 &
for i in $(seq 50); do systemctl is-active -q cri-containerd-mco-test.scope && break; sleep 0.1; done
systemctl show -p TimeoutStopUSec cri-containerd-mco-test.scope
start=$(date +%s%N); systemctl stop cri-containerd-mco-test.scope; echo "stopped in $(( ($(date +%s%N) - start) / 1000000000 ))s"`); got != "TimeoutStopUSec=10s\nstopped in 10s" {
		t.Fatalf("a container scope's stop bound: %q", got)
	}
	// systemd names what it had to kill, as the chaos suite reads it (an agent that outlived
	// its SIGTERM at a shutdown).
	if got := in("sh", "-c", "journalctl --no-pager -o cat _PID=1 | grep -c -e 'Killing process [0-9]* (sleep) with signal SIGKILL' -e '^cri-containerd-mco-test.scope: Stopping timed out'"); got != "2" {
		t.Fatalf("systemd's journal of the scope's stop timeout and SIGKILL: %q matching lines, want 2", got)
	}

	// The OS stages an image and a command line for the next boot, as its boot tooling would,
	// then reboots for real.
	in("sh", "-c", "mkdir -p /boot/mco-dev && echo test.local/os:2 > "+osimage.DevStagedImagePath+
		" && echo 'root=mco-dev rw audit=1' > "+osimage.KernelCmdlinePath+" && echo persisted > /var/tmp/marker && systemctl reboot")
	waitBoot(2)
	if got := in("cat", "/proc/cmdline"); got != "root=mco-dev rw audit=1" {
		t.Fatalf("after reboot, cmdline %q", got)
	}
	if got := in("cat", "/usr/lib/mco-dev/flavour"); got != "test.local/os:2" {
		t.Fatalf("after reboot, the image layer is %q", got)
	}
	if got := in("cat", "/var/tmp/marker"); got != "persisted" {
		t.Fatalf("the disk lost a file across the reboot: %q", got)
	}
	if st, _ := ReadStatus(c.Dir); st.LastExit != "reboot" || st.Image != "test.local/os:2" {
		t.Fatalf("status after reboot: %+v", st)
	}

	if err := PowerLoss(c.Dir); err != nil {
		t.Fatal(err)
	}
	waitBoot(3)
	if st, _ := ReadStatus(c.Dir); st.LastExit != "power loss" || st.Image != "test.local/os:2" {
		t.Fatalf("status after power loss: %+v", st)
	}
	if got := in("cat", "/etc/hello"); got != "from ignition" {
		t.Fatalf("Ignition ran again or the disk changed: /etc/hello = %q", got)
	}

	in("systemctl", "poweroff")
	select {
	case err := <-supDone:
		if err != nil {
			t.Fatalf("supervisor: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the supervisor did not stop after poweroff")
	}
	if st, _ := ReadStatus(c.Dir); st.State != Off || st.LastExit != "poweroff" {
		t.Fatalf("status after poweroff: %+v", st)
	}
	noLoopDevice := func(after string) {
		t.Helper()
		out, _ := exec.Command("losetup", "-j", filepath.Join(c.Dir, diskFile)).CombinedOutput()
		if strings.TrimSpace(string(out)) != "" {
			t.Fatalf("a loop device still holds the disk after %s: %s", after, out)
		}
	}
	noLoopDevice("poweroff")
	noCgroupsLeft(t, c, "poweroff")

	// A supervisor killed outright leaves its machine running (systemd ignores the parent-death
	// signal): the status says so, and Stop ends the orphan.
	sup = exec.Command(mco, "dev", "machine", "supervise", "--dir", c.Dir)
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	waitBoot(4)
	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sup.Wait()
	st, err := ReadStatus(c.Dir)
	if err != nil || st.Observed() != Orphaned {
		t.Fatalf("a machine whose supervisor was killed: observed %s (%+v, %v), want %s", st.Observed(), st, err, Orphaned)
	}
	if err := Stop(c.Dir, time.Second); err != nil {
		t.Fatal(err)
	}
	if Alive(st.InitPID) || st.Observed() != Off {
		t.Fatalf("Stop left the orphaned machine running (init %d, observed %s)", st.InitPID, st.Observed())
	}
	noLoopDevice("Stop of an orphan")
	noCgroupsLeft(t, c, "Stop of an orphan")
}

// checkKubeletReady checks what a real kubelet and container runtime need of a machine: a root
// that is its mount namespace's own (pivot_root) and shared, a cgroup tree of its own, and the
// kernel settings the kubelet insists on presented without touching the host's.
func checkKubeletReady(t *testing.T, c Config, in func(args ...string) string) {
	t.Helper()
	if got := in("findmnt", "-no", "PROPAGATION", "/"); got != "shared" {
		t.Errorf("the machine's / is %s, want shared (mount propagation into pods)", got)
	}
	// A command in the machine joins its root cgroups, the roots of its cgroup namespace.
	for _, line := range strings.Split(in("cat", "/proc/self/cgroup"), "\n") {
		if !strings.HasSuffix(line, ":/") {
			t.Errorf("/proc/self/cgroup in the machine: %q, want the machine's own root (0::/ style)", line)
		}
	}
	if got := in("cat", "/proc/1/cgroup"); !strings.Contains(got, "0::/init.scope") || !strings.Contains(got, "name=systemd:/init.scope") {
		t.Errorf("systemd's cgroups in the machine:\n%s\nwant /init.scope of its own tree", got)
	}
	st, err := ReadStatus(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	hostView, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", st.InitPID))
	if err != nil {
		t.Fatal(err)
	}
	initHs, err := parseProcCgroup(string(hostView))
	if err != nil {
		t.Fatal(err)
	}
	// The supervisor, and so the boot, started in this test's cgroups.
	ownHs, err := ownHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range initHs {
		if want := machineCgroupPath(ownHs[i], c.Name, c.Dir); h.Path != want && !strings.HasPrefix(h.Path, want+"/") {
			t.Errorf("the machine's systemd is in %s:%s on the host, want below %s", strings.Join(h.Controllers, ","), h.Path, want)
		}
	}

	for _, unit := range maskedUnits {
		// is-enabled exits 1 for a masked unit.
		if got, _ := Output(context.Background(), c.Dir, "systemctl", "is-enabled", unit); strings.TrimSpace(got) != "masked" {
			t.Errorf("%s in the machine is %q, want masked", unit, got)
		}
	}
	// logind read the kubelet's drop-in when it started: graceful node shutdown has its delay
	// from the first boot on.
	if got := in("busctl", "get-property", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "InhibitDelayMaxUSec"); got != "t 15000000" {
		t.Errorf("logind's InhibitDelayMaxUSec = %q, want t 15000000 (the kubelet's drop-in)", got)
	}

	for _, s := range kubeletKernelSettings {
		if got := in("cat", "/proc/sys/"+s.Key); got != s.Value {
			t.Errorf("/proc/sys/%s in the machine = %q, want %s", s.Key, got, s.Value)
		}
	}
	const overcommit = "/proc/sys/vm/overcommit_memory"
	host, err := os.ReadFile(overcommit)
	if err != nil {
		t.Fatal(err)
	}
	other := "1"
	if strings.TrimSpace(string(host)) == "1" {
		other = "2"
	}
	t.Cleanup(func() {
		if now, _ := os.ReadFile(overcommit); string(now) != string(host) {
			_ = os.WriteFile(overcommit, host, 0o644)
		}
	})
	// procps' sysctl reports the refused write on stderr but exits 0 whatever happened.
	_, _ = Output(context.Background(), c.Dir, "sysctl", "-w", "vm.overcommit_memory="+other)
	if now, _ := os.ReadFile(overcommit); string(now) != string(host) {
		t.Errorf("the machine changed the host's vm.overcommit_memory from %q to %q", host, now)
	}
}

// noCgroupsLeft checks that the machine's cgroups are gone from every hierarchy of the host.
func noCgroupsLeft(t *testing.T, c Config, after string) {
	t.Helper()
	hs, err := ownHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		root, unmount, err := openHierarchy(h)
		if err != nil {
			t.Fatal(err)
		}
		rel := machineCgroupPath(h, c.Name, c.Dir)
		if _, err := os.Stat(filepath.Join(root, rel)); !os.IsNotExist(err) {
			t.Errorf("after %s, the machine's cgroup %s:%s is still there (%v)", after, strings.Join(h.Controllers, ","), rel, err)
		}
		unmount()
	}
}
