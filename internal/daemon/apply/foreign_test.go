package apply

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// TestRecoverLeavesForeignStateAlone: after a crash, someone changed what the transaction had
// written (a directory it made got foreign content or became a symlink or a file, a file it
// wrote became a directory). Recover undoes the rest, leaves those as they are, and drops the
// journal.
func TestRecoverLeavesForeignStateAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t testing.TB, root string)
		extra  []string // what is left beyond the root before the transaction
	}{
		{"created directory has foreign content", func(t testing.TB, root string) {
			must(t, os.WriteFile(filepath.Join(root, "etc/newdir/sub/foreign"), nil, 0o644))
		}, []string{"etc/newdir", "etc/newdir/sub", "etc/newdir/sub/foreign"}},
		{"created directory moved and replaced by a symlink", func(t testing.TB, root string) {
			must(t, os.Rename(filepath.Join(root, "etc/newdir"), filepath.Join(root, "etc/moved")))
			must(t, os.Symlink("/etc/moved", filepath.Join(root, "etc/newdir")))
		}, []string{"etc/moved", "etc/newdir"}},
		{"created directory replaced by a file", func(t testing.TB, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "etc/newdir")))
			must(t, os.WriteFile(filepath.Join(root, "etc/newdir"), nil, 0o644))
		}, []string{"etc/newdir"}},
		{"written file replaced by a directory", func(t testing.TB, root string) {
			must(t, os.Remove(filepath.Join(root, "etc/a-first.conf")))
			must(t, os.Mkdir(filepath.Join(root, "etc/a-first.conf"), 0o755))
		}, []string{"etc/a-first.conf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hazard{failLater: true, path: "/etc/x/file"}
			root := hazardRoot(t, hazard{setup: func(testing.TB, string) {}})
			before := snapshot(t, root)
			ctx := context.Background()
			r, err := noderoot.Open(root)
			must(t, err)
			defer r.Close()
			a := &Applier{Root: r, Systemd: fakeSystemd{}}
			txn, err := a.Begin(ctx, h.request())
			must(t, err)
			if err := txn.Apply(ctx); err == nil {
				t.Fatal("Apply succeeded")
			}
			// The agent dies here; someone changes the root; the agent restarts.
			tc.change(t, root)
			if _, err := a.Recover(ctx); err != nil {
				t.Fatalf("Recover: %v", err)
			}
			var want []string
			for _, p := range tc.extra {
				want = append(want, "only in second: "+p)
			}
			got := diffSnapshots(before, snapshot(t, root))
			slices.Sort(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("after Recover:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			checkNextTransaction(t, root)
		})
	}
}

// TestRecoverFinishesAnOldStuckJournal is the node of issue 13: an earlier version journaled
// /etc/x as a directory it would create (it was a dangling symlink), and its rollback failed on
// it at every start. Recover now finishes: what the transaction wrote goes, what it never made
// stays.
func TestRecoverFinishesAnOldStuckJournal(t *testing.T) {
	root := hazardRoot(t, hazard{setup: func(t testing.TB, root string) {
		must(t, os.Symlink("/var/lib/x", filepath.Join(root, "etc/x")))
		must(t, os.WriteFile(filepath.Join(root, "etc/file-not-dir"), nil, 0o644))
		must(t, os.MkdirAll(filepath.Join(root, "etc/full"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "etc/full/foreign"), nil, 0o644))
	}})
	before := snapshot(t, root)
	// What the old Apply got to write before the refused write: a noorig stamp in a directory
	// it made, and a rolled-back-already part (the rollback failed later, on /etc/x).
	stampDir := filepath.Join(root, "etc/machine-config-daemon/noorig/etc/x")
	must(t, os.MkdirAll(stampDir, 0o755))
	must(t, os.WriteFile(filepath.Join(stampDir, "file.mcdnoorig"), nil, 0o644))
	must(t, os.MkdirAll(filepath.Join(root, BackupDir), 0o700))
	journal := `{"from":"base","to":"next","priors":[
	  {"path":"/etc/machine-config-daemon/noorig/etc/x/file.mcdnoorig","kind":"absent"},
	  {"path":"/etc/x/file","kind":"absent"},
	  {"path":"/etc/file-not-dir/y","kind":"absent"}],
	 "createdDirs":["/etc/machine-config-daemon/noorig","/etc/machine-config-daemon/noorig/etc","/etc/machine-config-daemon/noorig/etc/x",
	  "/etc/x","/etc/x/sub","/etc/file-not-dir","/etc/file-not-dir/sub","/etc/full","/etc/never"]}`
	must(t, os.WriteFile(filepath.Join(root, JournalPath), []byte(journal), 0o600))
	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	rec, err := (&Applier{Root: r, Systemd: fakeSystemd{}}).Recover(context.Background())
	if err != nil || rec.Outcome != RolledBack {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	checkUndone(t, root, before)
	checkNextTransaction(t, root)
}

// TestDirectoryMadeMeanwhileIsKept: a directory the transaction would have created, made by
// someone else between Begin and Apply, is not the transaction's to remove, in a rollback nor
// in Recover after a crash.
func TestDirectoryMadeMeanwhileIsKept(t *testing.T) {
	for _, crash := range []bool{false, true} {
		h := hazard{failLater: true, later: true, path: "/etc/x/file", setup: func(t testing.TB, root string) {
			must(t, os.Mkdir(filepath.Join(root, "etc/newdir"), 0o700))
		}}
		root := hazardRoot(t, h)
		var before map[string]string
		if _, err := runHazard(t, root, h, crash, &before); err != nil {
			t.Fatalf("crash %v: %v", crash, err)
		}
		checkUndone(t, root, before)
		checkNextTransaction(t, root)
	}
}
