package apply

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

// configA exercises every kind of entry.
const configA = `{"ignition":{"version":"3.5.0"},
 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA one","ssh-ed25519 BBBB two"],"passwordHash":"$6$salt$hash"}]},
 "storage":{"files":[
  {"path":"/etc/chrony.conf","mode":420,"contents":{"source":"data:,server%20a%0A"}},
  {"path":"/etc/newdir/sub/app.conf","mode":384,"user":{"name":"core"},"group":{"name":"wheel"},"contents":{"source":"data:,secret"}},
  {"path":"/etc/by-id.conf","mode":3053,"user":{"id":1000},"group":{"id":10},"contents":{"source":"data:;base64,H4sIAAAAAAAAA8tIzcnJBwCGphA2BQAAAA==","compression":"gzip"}}
 ]},
 "systemd":{"units":[
  {"name":"app.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
  {"name":"masked.service","mask":true},
  {"name":"kubelet.service","enabled":true,"dropins":[{"name":"10-mco.conf","contents":"[Service]\nEnvironment=A=1\n"}]}
 ]}}`

// configB changes chrony, drops the rest.
const configB = `{"ignition":{"version":"3.5.0"},
 "storage":{"files":[{"path":"/etc/chrony.conf","contents":{"source":"data:,server%20b%0A"}}]},
 "systemd":{"units":[{"name":"kubelet.service","dropins":[{"name":"10-mco.conf","contents":"[Service]\nEnvironment=A=2\n"}]}]}}`

func TestApplyCreateChangeRemoveRevert(t *testing.T) {
	requireSystemctl(t)
	root := newNodeRoot(t)
	before := snapshot(t, root)
	a, b := setOf(t, configA), setOf(t, configB)

	transition(t, root, Request{From: "", To: "a", New: a, Record: record("a")})
	if got := readFile(t, root, "etc/chrony.conf"); got != "server a\n" {
		t.Errorf("chrony.conf = %q", got)
	}
	if mode, _, _ := statOf(t, root, "etc/chrony.conf"); mode.Perm() != 0o644 {
		t.Errorf("chrony.conf mode %v", mode)
	}
	if mode, uid, gid := statOf(t, root, "etc/newdir/sub/app.conf"); mode.Perm() != 0o600 || uid != 1000 || gid != 10 {
		t.Errorf("app.conf %v %d:%d, want 0600 1000:10 (owner names from the root's passwd and group)", mode, uid, gid)
	}
	if mode, _, _ := statOf(t, root, "etc/newdir"); mode.Perm() != 0o755 || !mode.IsDir() {
		t.Errorf("created parent %v, want 0755 dir", mode)
	}
	if mode, uid, gid := statOf(t, root, "etc/by-id.conf"); mode&fs.ModeSticky == 0 || mode&fs.ModeSetuid == 0 || mode.Perm() != 0o755 || uid != 1000 || gid != 10 {
		t.Errorf("by-id.conf %v %d:%d, want setuid+sticky 0755 1000:10", mode, uid, gid)
	}
	if got := readFile(t, root, "etc/by-id.conf"); got != "hello" {
		t.Errorf("gzip content = %q", got)
	}
	if target, _ := os.Readlink(filepath.Join(root, "etc/systemd/system/masked.service")); target != "/dev/null" {
		t.Errorf("masked.service -> %q", target)
	}
	for _, wants := range []string{"app.service", "kubelet.service"} {
		if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", wants)); err != nil {
			t.Errorf("%s not enabled: %v", wants, err)
		}
	}
	if got := readFile(t, root, "etc/systemd/system/kubelet.service.d/10-mco.conf"); !strings.Contains(got, "A=1") {
		t.Errorf("dropin = %q", got)
	}
	if got := readFile(t, root, strings.TrimPrefix(nodefiles.SSHKeysPath, "/")); got != "ssh-ed25519 AAAA one\nssh-ed25519 BBBB two\n" {
		t.Errorf("keys = %q", got)
	}
	for p, want := range map[string]fs.FileMode{"home/core/.ssh": 0o700, "home/core/.ssh/authorized_keys.d": 0o700, "home/core/.ssh/authorized_keys.d/ignition": 0o600} {
		if mode, uid, gid := statOf(t, root, p); mode.Perm() != want || uid != 1000 || gid != 1000 {
			t.Errorf("%s: %v %d:%d, want %v core:core", p, mode, uid, gid, want)
		}
	}
	if got := readFile(t, root, "etc/shadow"); !strings.Contains(got, "core:$6$salt$hash:19000") {
		t.Errorf("shadow = %q", got)
	}
	if got := readFile(t, root, "etc/machine-config-daemon/orig/etc/chrony.conf.mcdorig"); got != "pool 2.pool.ntp.org iburst\n" {
		t.Errorf("original of chrony.conf = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/machine-config-daemon/noorig/etc/newdir/sub/app.conf.mcdnoorig")); err != nil {
		t.Errorf("no noorig stamp for a path that did not exist: %v", err)
	}

	transition(t, root, Request{From: "a", To: "b", Old: a, New: b, Record: record("b")})
	if got := readFile(t, root, "etc/chrony.conf"); got != "server b\n" {
		t.Errorf("chrony.conf = %q", got)
	}
	for _, p := range []string{"etc/newdir/sub/app.conf", "etc/by-id.conf", "etc/systemd/system/app.service", "etc/systemd/system/masked.service",
		"etc/systemd/system/multi-user.target.wants/app.service", "home/core/.ssh/authorized_keys.d/ignition",
		"etc/machine-config-daemon/noorig/etc/newdir/sub/app.conf.mcdnoorig"} {
		absent(t, root, p)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/kubelet.service")); err != nil {
		t.Errorf("kubelet.service (enabled unset, no preset) should keep its enablement: %v", err)
	}
	if got := readFile(t, root, "etc/shadow"); !strings.Contains(got, "core:!!:19000") {
		t.Errorf("core's original password not restored: %q", got)
	}

	// Back to before any MachineConfig: originals return, what MCs created goes.
	transition(t, root, Request{From: "b", To: "", Old: b})
	after := snapshot(t, root)
	for _, d := range diffSnapshots(before, after) {
		// Directories created for MachineConfig files stay, as in OpenShift; enablement of the
		// vendor kubelet.service stays too (it was enabled by a MachineConfig's preset).
		if strings.HasPrefix(d, "only in second: etc/machine-config-daemon") || strings.HasPrefix(d, "only in second: etc/newdir") ||
			strings.HasPrefix(d, "only in second: home/core/.ssh") || strings.Contains(d, "systemd/system/") {
			continue
		}
		t.Errorf("not reverted: %s", d)
	}
	if mode, _, _ := statOf(t, root, "etc/chrony.conf"); mode.Perm() != 0o640 {
		t.Errorf("original mode not restored: %v", mode)
	}
}

func TestFailedApplyRollsBackExactly(t *testing.T) {
	requireSystemctl(t)
	root := newNodeRoot(t)
	a := setOf(t, configA)
	transition(t, root, Request{To: "a", New: a, Record: record("a")})
	before := snapshot(t, root)
	// enabling a unit that exists nowhere fails after every file was written
	bad := setOf(t, `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/chrony.conf","contents":{"source":"data:,x"}},{"path":"/etc/other","contents":{"source":"data:,y"}}]},
	 "systemd":{"units":[{"name":"ghost.service","enabled":true,"dropins":[{"name":"a.conf","contents":"[Unit]"}]}, {"name":"new.service","enabled":true,"contents":"[Install]\nWantedBy=multi-user.target\n"}]}}`)
	bad.Units[0].HasFile = true // pretend it has a file so systemctl is asked, and fails
	err := runTransition(context.Background(), root, Request{From: "a", To: "bad", Old: a, New: bad, Record: record("bad")})
	if err == nil {
		t.Fatal("apply should fail")
	}
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("root differs after rollback (%v):\n%s", err, strings.Join(d, "\n"))
	}
}

func TestUnchangedEntriesAreNotRewritten(t *testing.T) {
	requireSystemctl(t)
	root := newNodeRoot(t)
	a := setOf(t, configA)
	// A missing file must fail the test: os.SameFile(nil, x) is false, which would pass the
	// forced-rewrite check below.
	stat := func() os.FileInfo {
		t.Helper()
		info, err := os.Stat(filepath.Join(root, "etc/newdir/sub/app.conf"))
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	transition(t, root, Request{To: "a", New: a, Record: record("a")})
	info1 := stat()
	transition(t, root, Request{From: "a", To: "a2", Old: a, New: a, Record: record("a2")})
	info2 := stat()
	if !os.SameFile(info1, info2) {
		t.Error("an unchanged file was rewritten")
	}
	transition(t, root, Request{From: "a2", To: "a3", Old: a, New: a, Force: true, Record: record("a3")})
	info3 := stat()
	if os.SameFile(info2, info3) {
		t.Error("a forced rewrite skipped a file")
	}
}

// An empty passwordHash locks core's password, as OpenShift's agent does: writing it as it is
// would let anyone log in as core without a password.
func TestEmptyPasswordHashLocks(t *testing.T) {
	requireSystemctl(t)
	root := newNodeRoot(t)
	empty := setOf(t, `{"ignition":{"version":"3.5.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA one"],"passwordHash":""}]}}`)
	transition(t, root, Request{From: "", To: "e", New: empty, Record: record("e")})
	if got := readFile(t, root, "etc/shadow"); !strings.Contains(got, "core:*:19000") {
		t.Errorf("shadow = %q, want core's password locked (*)", got)
	}
}
