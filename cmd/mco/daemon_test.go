//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// configSet is a config of one file, /etc/recover.conf holding data.
func configSet(data string) nodefiles.Set {
	return nodefiles.Set{Entries: []nodefiles.Entry{{Path: "/etc/recover.conf", Data: []byte(data), Perm: 0o644}}}
}

func record(name string) []byte {
	return []byte(fmt.Sprintf(`{"kind":"MachineConfig","metadata":{"name":%q}}`, name))
}

// transact runs one transaction from config from (data "a") to "b"; commit false stops where a
// crash would, after Apply.
func transact(t *testing.T, root string, from, to string, commit bool) {
	t.Helper()
	ctx := context.Background()
	r, err := noderoot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := nodefiles.Set{}
	if from != "" {
		old = configSet(from)
	}
	a := &apply.Applier{Root: r, Systemd: systemd.New(root)}
	txn, err := a.Begin(ctx, apply.Request{From: from, To: to, Old: old, New: configSet(to), Record: record(to)})
	if err == nil {
		err = txn.Apply(ctx)
	}
	if err == nil && commit {
		err = txn.Commit(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// stuckRoot is a root in config "a" left mid-update to "b" with the backup of the file the
// update replaced moved to aside: its rollback fails until the backup is back.
func stuckRoot(t *testing.T) (root, aside string) {
	root, aside = t.TempDir(), t.TempDir()
	for _, d := range []string{"etc", "run"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	transact(t, root, "", "a", true)
	transact(t, root, "a", "b", false)
	moveAll(t, filepath.Join(root, apply.BackupDir), aside)
	return root, aside
}

func moveAll(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil || len(entries) == 0 {
		t.Fatalf("nothing to move in %s: %v", from, err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(root, p string) bool {
	_, err := os.Lstat(filepath.Join(root, p))
	return err == nil
}

// TestDaemonRecover: `mco daemon recover` says what is in the way and exits 1 while a rollback
// fails, rolls back once the cause is fixed, and with --abandon keeps and drops the journal
// and creates the force file.
func TestDaemonRecover(t *testing.T) {
	cases := []struct {
		name    string
		fix     bool
		abandon bool
		code    int
		stdout  []string
		stderr  []string
		check   func(t *testing.T, root string)
	}{
		{name: "still stuck", code: 1, stderr: []string{
			`the update from "a" to "b" is still journaled`, "rolling back /etc/recover.conf", "--abandon"},
			check: func(t *testing.T, root string) {
				if !exists(root, apply.JournalPath) {
					t.Error("the journal is gone although the rollback failed")
				}
			}},
		{name: "fixed", fix: true, stdout: []string{`rolled back the update from "a" to "b"`, `is in "a" again`},
			check: func(t *testing.T, root string) {
				if data, _ := os.ReadFile(filepath.Join(root, "etc/recover.conf")); string(data) != "a" {
					t.Errorf("/etc/recover.conf = %q after the rollback, want %q", data, "a")
				}
				if exists(root, apply.JournalPath) {
					t.Error("the journal is still there")
				}
			}},
		{name: "abandoned", abandon: true, stdout: []string{`abandoned the update from "a" to "b"`, "journal.abandoned-", daemon.ForceFilePath},
			check: func(t *testing.T, root string) {
				if exists(root, apply.JournalPath) || !exists(root, daemon.ForceFilePath) {
					t.Error("want the journal gone and the force file created")
				}
				kept, _ := filepath.Glob(filepath.Join(root, apply.StateDir, "journal.abandoned-*", "journal"))
				if len(kept) != 1 {
					t.Errorf("abandoned journals kept: %v, want one", kept)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, aside := stuckRoot(t)
			if tc.fix {
				moveAll(t, aside, filepath.Join(root, apply.BackupDir))
			}
			args := []string{"daemon", "recover", "--root", root}
			if tc.abandon {
				args = append(args, "--abandon")
			}
			stdout, stderr, code := runMCO(t, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			tc.check(t, root)
			// Once settled, a second run finds nothing journaled.
			if tc.code == 0 {
				if stdout, _, _ := runMCO(t, "daemon", "recover", "--root", root); !strings.Contains(stdout, "nothing to recover") {
					t.Errorf("second run: %s", stdout)
				}
			}
		})
	}
}

// TestDaemonFirstBootFailsWhenItCannotRecord: a first-boot failure the service could not record
// (here its state directory is a file) fails the unit, since the agent cannot report what was
// never written; the next boot runs the service again.
func TestDaemonFirstBootFailsWhenItCannotRecord(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, apply.StateDir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runMCO(t, "daemon", "firstboot", "--root", root)
	if code != 1 || strings.Contains(stderr, "the agent reports it") {
		t.Errorf("exit %d, want 1 without claiming the agent reports it\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, apply.StateDir) {
		t.Errorf("stderr does not name %s:\n%s", apply.StateDir, stderr)
	}
}
