package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestRemovalBehindAPlantedLinkIsLeftAlone: a config wrote /etc/x/f, then someone replaced
// /etc/x by a link climbing out of the root; the next config, without the file, is applied
// (the node is not stranded) and nothing is unlinked through the link.
func TestRemovalBehindAPlantedLinkIsLeftAlone(t *testing.T) {
	root := newNodeRoot(t)
	transition(t, root, Request{To: "a", New: fileSet(map[string]string{"/etc/x/f": "ours\n"}), Record: record("a")})
	must(t, os.RemoveAll(filepath.Join(root, "etc/x")))
	must(t, os.Symlink("../../../../../../../../tmp", filepath.Join(root, "etc/x")))
	must(t, os.MkdirAll(filepath.Join(root, "tmp"), 0o1777))
	must(t, os.WriteFile(filepath.Join(root, "tmp/f"), []byte("not ours\n"), 0o644))

	transition(t, root, Request{From: "a", To: "b", Old: fileSet(map[string]string{"/etc/x/f": "ours\n"}),
		New: fileSet(map[string]string{"/etc/other.conf": "b\n"}), Record: record("b")})
	if data, err := os.ReadFile(filepath.Join(root, "tmp/f")); err != nil || string(data) != "not ours\n" {
		t.Errorf("removed through the planted link: /tmp/f = %q, %v", data, err)
	}
	absent(t, root, strings.TrimPrefix(noOrigPath("/etc/x/f"), "/"))
	if target, err := os.Readlink(filepath.Join(root, "etc/x")); err != nil || target != "../../../../../../../../tmp" {
		t.Errorf("the link itself changed: %q, %v", target, err)
	}
}

// TestRollbackLeavesPlantedLinksAlone: a journal an older agent left names paths behind a link
// into /proc (issue 37: "syncing /etc/y: invalid argument" failed the rollback and left the
// node Degraded until `mco-node daemon recover`). Recovery rolls back without writing or
// syncing through the link.
func TestRollbackLeavesPlantedLinksAlone(t *testing.T) {
	root := newNodeRoot(t)
	testenv.MountProc(t, root)
	must(t, os.Symlink("/proc/self", filepath.Join(root, "etc/y")))
	must(t, os.MkdirAll(filepath.Join(root, StateDir), 0o755))
	must(t, os.WriteFile(filepath.Join(root, CurrentConfigPath), record("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, JournalPath), []byte(`{"version":1,"from":"a","to":"b","priors":[`+
		`{"path":"/etc/y/comm","kind":"absent"},{"path":"/etc/y/new.conf","kind":"absent"}]}`), 0o644))
	comm, err := os.ReadFile("/proc/self/comm")
	must(t, err)

	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	rec, err := (&Applier{Root: r, Systemd: fakeSystemd{}}).Recover(context.Background())
	if err != nil || rec.Outcome != RolledBack {
		t.Fatalf("Recover = %+v, %v; want a rollback", rec, err)
	}
	absent(t, root, strings.TrimPrefix(JournalPath, "/"))
	if now, err := os.ReadFile("/proc/self/comm"); err != nil || string(now) != string(comm) {
		t.Errorf("comm %q → %q, %v", comm, now, err)
	}
}
