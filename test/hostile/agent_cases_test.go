package hostile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/testenv"
)

// validJournal is a journal as the agent writes it, for the transaction rendered-a →
// rendered-b that replaced /etc/chrony.conf (backed up as journal.d/0) and created /etc/new.conf.
const validJournal = `{"version":1,"from":"rendered-a","to":"rendered-b","priors":[` +
	`{"path":"/etc/chrony.conf","kind":"file","backup":"/etc/machine-config-daemon/journal.d/0"},` +
	`{"path":"/etc/new.conf","kind":"absent"}],"createdDirs":["/etc/new.d"]}`

// journalCases put a damaged journal into a node root and run the agent's crash recovery
// (apply.Applier.Recover, what every agent start does first): it must refuse, naming the
// journal file and the field, and leave every byte under the root as it was.
func agentCases() []hostileCase {
	rows := []struct{ name, journal, field, reason string }{
		{"truncated journal", validJournal[:len(validJournal)/2], "", "truncated"},
		{"trailing data", validJournal + `{"priors":[]}`, "", "data after the journal"},
		{"priors of the wrong type", `{"version":1,"from":"a","to":"b","priors":{"path":"/etc/passwd","kind":"absent"}}`, "priors", "got a JSON object, want a list"},
		{"path of the wrong type", `{"version":1,"from":"a","to":"b","priors":[{"path":7,"kind":"absent"}]}`, "priors.path", "got a JSON number, want a string"},
		{"unknown field", `{"version":1,"from":"a","to":"b","priors":[],"runAfter":"/bin/sh"}`, "", `unknown field "runAfter"`},
		{"unknown field in a prior", strings.Replace(validJournal, `"kind":"absent"`, `"kind":"absent","mode":420`, 1), "", `unknown field "priors.1.mode"`},
		{"key given twice", strings.Replace(validJournal, `"kind":"absent"`, `"kind":"absent","path":"/etc/other.conf"`, 1), "", `key "priors.1.path" is given more than once`},
		{"key differing only in case", strings.Replace(validJournal, `"to":"rendered-b"`, `"to":"rendered-b","To":"rendered-z"`, 1), "", `unknown field "To"`},
		{"relative path", strings.Replace(validJournal, `"/etc/new.conf"`, `"etc/passwd"`, 1), "priors.1.path", `"etc/passwd" is not a clean absolute path`},
		{"dot-dot path", strings.Replace(validJournal, `"/etc/new.conf"`, `"/etc/new.d/../../etc/shadow"`, 1), "priors.1.path", "is not a clean absolute path"},
		{"the root itself", strings.Replace(validJournal, `"/etc/new.conf"`, `"/"`, 1), "priors.1.path", `"/" is not a clean absolute path below /`},
		{"backup outside journal.d", strings.Replace(validJournal, `/etc/machine-config-daemon/journal.d/0`, `/etc/shadow`, 1), "priors.0.backup", "is not in /etc/machine-config-daemon/journal.d"},
		{"backup escaping journal.d", strings.Replace(validJournal, `journal.d/0`, `journal.d/../../../etc/shadow`, 1), "priors.0.backup", "is not a clean absolute path"},
		{"unknown prior kind", strings.Replace(validJournal, `"kind":"absent"`, `"kind":"device"`, 1), "priors.1.kind", `"device" is not one of absent, file, symlink`},
		{"symlink without a target", strings.Replace(validJournal, `"kind":"absent"`, `"kind":"symlink"`, 1), "priors.1.target", "needs its target"},
		{"created directory with dot-dot", strings.Replace(validJournal, `"/etc/new.d"`, `"/etc/../var"`, 1), "createdDirs.0", "is not a clean absolute path"},
		{"unit link outside the unit directory", strings.Replace(validJournal, `"createdDirs"`, `"snapshotUnits":true,"unitLinks":[{"path":"/etc/passwd","target":"/dev/null"}],"createdDirs"`, 1),
			"unitLinks.0.path", `"/etc/passwd" is not under /etc/systemd/system`},
		{"unit directory outside the unit directory", strings.Replace(validJournal, `"createdDirs"`, `"snapshotUnits":true,"unitDirs":["/etc/cron.d"],"createdDirs"`, 1),
			"unitDirs.0", `"/etc/cron.d" is not under /etc/systemd/system`},
		{"unknown version", strings.Replace(validJournal, `"version":1`, `"version":7`, 1), "version", "7 is not a journal version this agent reads"},
	}
	var cases []hostileCase
	for _, r := range rows {
		want := []string{"corrupt journal " + apply.JournalPath, r.reason}
		if r.field != "" {
			want = append(want, r.field+": ")
		}
		cases = append(cases, hostileCase{
			entry: "apply.Recover (journal on disk)", name: r.name, want: want,
			run: func(t *testing.T) error { return recoverRefuses(t, r.journal) },
		})
	}
	return append(cases, symlinkEscapeCases()...)
}

// journalRoot is a node root in the middle of the transaction validJournal describes.
func journalRoot(t *testing.T, journal string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	files := map[string]string{
		"etc/passwd":      "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000::/home/core:/bin/bash\n",
		"etc/group":       "root:x:0:\ncore:x:1000:\n",
		"etc/shadow":      "root:*:19000:0:99999:7:::\n",
		"etc/chrony.conf": "server b\n",
		"etc/new.conf":    "new\n",
		"etc/machine-config-daemon/currentconfig":          `{"metadata":{"name":"rendered-a"}}`,
		"etc/machine-config-daemon/journal.d/0":            "server a\n",
		"etc/machine-config-daemon/journal":                journal,
		"etc/systemd/system/multi-user.target.wants/.keep": "",
	}
	for p, data := range files {
		full := filepath.Join(root, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(data), 0o644))
	}
	must(t, os.MkdirAll(filepath.Join(root, "etc/new.d"), 0o755))
	must(t, os.Symlink("/usr/lib/systemd/system/chronyd.service", filepath.Join(root, "etc/systemd/system/multi-user.target.wants/chronyd.service")))
	return root
}

func recoverRefuses(t *testing.T, journal string) error {
	root := journalRoot(t, journal)
	before := snapshot(t, root)
	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	a := &apply.Applier{Root: r, Systemd: noSystemd{}}
	rec, err := a.Recover(context.Background())
	if err == nil {
		t.Errorf("recovered (%+v)", rec)
	}
	if _, _, ok, jerr := a.Journaled(); jerr == nil || ok {
		t.Errorf("Journaled() reads the damaged journal: ok=%v err=%v", ok, jerr)
	}
	sameTree(t, root, before)
	return err
}

// TestValidJournalRecovers: the fixture every journal case damages is one Recover rolls back,
// so what the cases see refused is the damage, not the fixture.
func TestValidJournalRecovers(t *testing.T) {
	root := journalRoot(t, validJournal)
	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	rec, err := (&apply.Applier{Root: r, Systemd: noSystemd{}}).Recover(context.Background())
	if err != nil || rec.Outcome != apply.RolledBack {
		t.Fatalf("Recover = %+v, %v; want a rollback", rec, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "etc/chrony.conf")); string(data) != "server a\n" {
		t.Errorf("chrony.conf = %q after the rollback", data)
	}
	for _, gone := range []string{"etc/new.conf", "etc/new.d", "etc/machine-config-daemon/journal"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there after the rollback", gone)
		}
	}
}

// symlinkEscapeCases give the agent's transaction a file to write behind a symlink leading out
// of the node root or into a kernel file system (the apply package's hazard table covers these
// and more, rolled back at every step; here they go through the public API once each): Begin
// refuses, naming the path and the link, and neither the root nor the directory outside it
// changes. Issue 37's two links planted on a worker are among them: one climbing out of the
// root to /tmp, which the root has too, and one to /proc/self, with a real procfs at /proc.
func symlinkEscapeCases() []hostileCase {
	rows := []struct {
		name   string
		target func(outside string) string
		file   string
		setup  func(t *testing.T, root string)
		reason string
	}{
		{name: "absolute symlink out of the root", target: func(outside string) string { return outside },
			reason: "/etc/x is a symlink to \"/"},
		{name: "relative symlink climbing out of the root", target: fixedTarget("../../../../../../../outside"),
			reason: `file /etc/x/file: /etc/x is a symbolic link to "../../../../../../../outside", which leaves the host root; refusing`},
		{name: "relative symlink climbing out of the root to /tmp, which the root has", target: fixedTarget("../../../../../../../../tmp"),
			file:   "/etc/x/f",
			setup:  func(t *testing.T, root string) { must(t, os.Mkdir(filepath.Join(root, "tmp"), 0o1777)) },
			reason: `file /etc/x/f: /etc/x is a symbolic link to "../../../../../../../../tmp", which leaves the host root; refusing`},
		{name: "symlink to /proc/self", target: fixedTarget("/proc/self"), file: "/etc/x/comm", setup: func(t *testing.T, root string) { testenv.MountProc(t, root) },
			reason: `file /etc/x/comm: /etc/x is a symbolic link to "/proc/self", which leads into /proc, a kernel file system the agent never writes to; refusing`},
	}
	var cases []hostileCase
	for _, r := range rows {
		file := r.file
		if file == "" {
			file = "/etc/x/file"
		}
		cases = append(cases, hostileCase{
			entry: "apply.Begin (symlink escape)", name: r.name,
			want: []string{file + ": ", r.reason},
			run: func(t *testing.T) error {
				root, outside := journalRoot(t, ""), filepath.Join(t.TempDir(), "outside")
				must(t, os.MkdirAll(outside, 0o755))
				// No transaction in progress: only the committed config.
				must(t, os.Remove(filepath.Join(root, apply.JournalPath)))
				must(t, os.RemoveAll(filepath.Join(root, apply.BackupDir)))
				if r.setup != nil {
					r.setup(t, root)
				}
				must(t, os.Symlink(r.target(outside), filepath.Join(root, "etc/x")))
				before, beforeOut := snapshot(t, root), snapshot(t, outside)

				rr, err := noderoot.Open(root)
				must(t, err)
				defer rr.Close()
				cfg, err := ignition.Parse([]byte(file35(`"path":"` + file + `","mode":420,"contents":{"source":"data:,owned"}`)))
				must(t, err)
				next, err := nodefiles.FromConfig(cfg)
				must(t, err)
				txn, err := (&apply.Applier{Root: rr, Systemd: noSystemd{}}).Begin(context.Background(),
					apply.Request{From: "rendered-a", To: "rendered-b", New: next, Record: []byte(`{"metadata":{"name":"rendered-b"}}`)})
				if err == nil {
					t.Errorf("Begin accepted the transaction")
					_ = txn.Rollback(context.Background())
				}
				sameTree(t, root, before)
				sameTree(t, outside, beforeOut)
				return err
			},
		})
	}
	return cases
}

func fixedTarget(target string) func(string) string { return func(string) string { return target } }

// snapshot describes every entry under dir: type, permissions, owner, and content or target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var top syscall.Stat_t
	must(t, syscall.Lstat(dir, &top))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		if info.IsDir() && st.Dev != top.Dev {
			out[rel] = "mount point" // another file system (a procfs): not the root's to compare
			return filepath.SkipDir
		}
		desc := fmt.Sprintf("%v uid=%d gid=%d", info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" ino=%d sha256=%x", st.Ino, sha256.Sum256(data))
		}
		out[rel] = desc
		return nil
	})
	must(t, err)
	return out
}

// sameTree fails the test when dir differs from a snapshot taken before.
func sameTree(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
	var diffs []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if a != b {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s → %s", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("%s changed:\n  %s", dir, strings.Join(diffs, "\n  "))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// noSystemd fails every call: recovery and a refused Begin must not need systemd.
type noSystemd struct{}

var errNoSystemd = errors.New("systemd must not be called")

func (noSystemd) Enable(context.Context, ...string) error         { return errNoSystemd }
func (noSystemd) Disable(context.Context, ...string) error        { return errNoSystemd }
func (noSystemd) Preset(context.Context, ...string) error         { return errNoSystemd }
func (noSystemd) IsEnabled(context.Context, string) (bool, error) { return false, errNoSystemd }
func (noSystemd) Reload(context.Context, string) error            { return errNoSystemd }
func (noSystemd) Restart(context.Context, string) error           { return errNoSystemd }
func (noSystemd) DaemonReload(context.Context) error              { return errNoSystemd }
