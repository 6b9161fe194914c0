package apply

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// hazard is something on a node's disk in the way of a transaction (issue 13: /etc/x was a
// symlink, the write through it was refused, and the rollback failed on the directory it
// thought it had made, leaving the journal stuck).
type hazard struct {
	name string
	// tmpfs puts the root on a small file system of its own.
	tmpfs bool
	// setup puts the hazard in place; with later, after Begin and before Apply (the state
	// changed while the transaction ran), else before Begin. root's parent also holds
	// "outside", a directory a symlink escaping the root would reach.
	setup func(t testing.TB, root string)
	later bool
	// alsoLater: the table also has the hazard appearing after Begin.
	alsoLater bool
	// path is the file the transaction writes through or onto the hazard; data its content.
	path string
	data []byte
	// failLater: the hazard itself is fine (a symlink resolved inside the root, as the node
	// would); enabling a unit fails after every write instead, to roll the writes back.
	failLater bool
	refused   bool   // Begin refuses, before anything changes
	wantErr   string // in the error of Begin or Apply
	// beforeUndo runs after Apply failed, before the rollback; settle removes what the test
	// itself added before the next transaction.
	beforeUndo, settle func(t testing.TB, root string)
}

const hazardPath = "/etc/x/file"

func (h hazard) target() string {
	if h.path != "" {
		return h.path
	}
	return hazardPath
}

func (h hazard) request() Request {
	data := h.data
	if data == nil {
		data = []byte("new\n")
	}
	next := fileSet(map[string]string{
		"/etc/a-first.conf":        "first\n",
		"/etc/chrony.conf":         "server b\n",
		"/etc/newdir/sub/app.conf": "app\n",
		h.target():                 string(data),
		"/etc/zz-last.conf":        "last\n",
	})
	if h.failLater {
		yes := true
		next.Units = []nodefiles.Unit{{Name: "fails.service", Enabled: &yes, HasFile: true}}
	}
	return Request{From: "base", To: "next", Old: baseSet(), New: next, Record: record("next")}
}

func baseSet() nodefiles.Set { return fileSet(map[string]string{"/etc/chrony.conf": "server a\n"}) }

func fileSet(files map[string]string) nodefiles.Set {
	var s nodefiles.Set
	for p, data := range files {
		s.Entries = append(s.Entries, nodefiles.Entry{Path: p, Data: []byte(data), Perm: 0o644, ParentPerm: 0o755})
	}
	slices.SortFunc(s.Entries, func(a, b nodefiles.Entry) int { return strings.Compare(a.Path, b.Path) })
	return s
}

func hazards() []hazard {
	symlink := func(target func(root string) string) func(testing.TB, string) {
		return func(t testing.TB, root string) {
			must(t, os.Symlink(target(root), filepath.Join(root, "etc/x")))
		}
	}
	fixed := func(s string) func(string) string { return func(string) string { return s } }
	outside := func(root string) string { return filepath.Join(filepath.Dir(root), "outside") }
	mkdir := func(p string) func(testing.TB, string) {
		return func(t testing.TB, root string) { must(t, os.MkdirAll(filepath.Join(root, p), 0o755)) }
	}
	file := func(t testing.TB, root string) {
		must(t, os.WriteFile(filepath.Join(root, "etc/x"), []byte("a file\n"), 0o644))
	}
	dangling := `/etc/x/file: /etc/x is a symlink to %q, which does not exist inside the node root; refusing`
	leaves := `file /etc/x/file: /etc/x is a symbolic link to "../../outside", which leaves the host root; refusing`
	hs := []hazard{
		{name: "symlink to a directory inside the root", failLater: true, path: "/etc/x/sub/file", wantErr: "enable failed",
			setup: func(t testing.TB, root string) { mkdir("etc/y")(t, root); symlink(fixed("/etc/y"))(t, root) }},
		{name: "relative symlink inside the root", failLater: true, wantErr: "enable failed",
			setup: func(t testing.TB, root string) { mkdir("kept")(t, root); symlink(fixed("../kept"))(t, root) }},
		// Resolved inside the root it would lead to the root's own "outside" (".." stops at
		// the root, as Ignition's chroot stops it), but a link climbing above "/" is planted,
		// not made by anything that meant that directory: refused (package plantedlink).
		{name: "relative symlink climbing out of the root to a directory inside it", refused: true, alsoLater: true,
			setup:   func(t testing.TB, root string) { mkdir("outside")(t, root); symlink(fixed("../../outside"))(t, root) },
			wantErr: leaves},
		{name: "relative symlink escaping the root", refused: true, alsoLater: true, setup: symlink(fixed("../../outside")),
			wantErr: leaves},
		{name: "symlink into /proc", refused: true, alsoLater: true, setup: symlink(fixed("/proc/self")),
			wantErr: `file /etc/x/file: /etc/x is a symbolic link to "/proc/self", which leads into /proc, a kernel file system the agent never writes to; refusing`},
		{name: "absolute symlink out of the root", refused: true, alsoLater: true, setup: symlink(outside),
			wantErr: `/etc/x/file: /etc/x is a symlink to "/`},
		{name: "dangling symlink component", refused: true, alsoLater: true, setup: symlink(fixed("/etc/nowhere")),
			wantErr: strings.Replace(dangling, "%q", `"/etc/nowhere"`, 1)},
		{name: "symlink loop component", refused: true, alsoLater: true, setup: symlink(fixed("x")),
			wantErr: `/etc/x/file: /etc/x is a symlink to "x", which loops; refusing`},
		{name: "component is a regular file", refused: true, alsoLater: true, setup: file,
			wantErr: "/etc/x/file: /etc/x is a regular file, not a directory; refusing"},
		{name: "target is a directory", refused: true, alsoLater: true, setup: mkdir("etc/x/file"),
			wantErr: "/etc/x/file is a directory or special file"},
		{name: "immutable file", wantErr: "write /etc/x/file: operation not permitted",
			setup: func(t testing.TB, root string) {
				mkdir("etc/x")(t, root)
				must(t, os.WriteFile(filepath.Join(root, hazardPath), []byte("old\n"), 0o600))
				immutable(t, filepath.Join(root, hazardPath))
			}},
		{name: "immutable directory", wantErr: "write /etc/x/file: operation not permitted",
			setup: func(t testing.TB, root string) { mkdir("etc/x")(t, root); immutable(t, filepath.Join(root, "etc/x")) }},
		{name: "read-only bind mount", wantErr: "write /etc/x/file: read-only file system",
			setup: func(t testing.TB, root string) {
				mkdir("etc/x")(t, root)
				readOnlyBind(t, filepath.Join(root, "etc/x"))
			}},
		// Right after chrony.conf, so the rollback restores it before removing anything frees
		// a block.
		{name: "full disk", tmpfs: true, path: "/etc/chrony.conf.d/big", data: make([]byte, 2<<20),
			wantErr: "write /etc/chrony.conf.d/big: no space left on device",
			setup: func(t testing.TB, root string) {
				fill(t, filepath.Join(root, "filler"))
				must(t, os.Truncate(filepath.Join(root, "filler"), fileSize(t, filepath.Join(root, "filler"))-64<<10))
			},
			// The rollback runs with not one block free.
			beforeUndo: func(t testing.TB, root string) { fill(t, filepath.Join(root, "filler2")) },
			settle:     func(t testing.TB, root string) { must(t, removeIfAny(filepath.Join(root, "filler2"))) }},
		{name: "full disk at Begin", tmpfs: true, refused: true, wantErr: "journaling the transaction: write /etc/machine-config-daemon/journal: no space left on device",
			setup:  func(t testing.TB, root string) { fill(t, filepath.Join(root, "filler")) },
			settle: func(t testing.TB, root string) { must(t, os.Remove(filepath.Join(root, "filler"))) }},
	}
	// The same states appearing after Begin: Apply fails on them, and the rollback leaves
	// them as it finds them.
	for _, h := range hs {
		if !h.alsoLater {
			continue
		}
		h.name += " after Begin"
		h.later, h.refused = true, false
		if h.name == "target is a directory after Begin" {
			h.wantErr = "write /etc/x/file: is a directory"
		}
		hs = append(hs, h)
	}
	return hs
}

func hazardByName(name string) hazard {
	for _, h := range hazards() {
		if h.name == name {
			return h
		}
	}
	panic("no hazard " + name)
}

// hazardRoot makes a node root committed to baseSet with the hazard in place (unless later).
func hazardRoot(t testing.TB, h hazard) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	must(t, os.Mkdir(root, 0o755))
	must(t, os.Mkdir(filepath.Join(base, "outside"), 0o755))
	if h.tmpfs {
		must(t, unix.Mount("tmpfs", root, "tmpfs", 0, "size=1m,mode=0755"))
		t.Cleanup(func() { unix.Unmount(root, unix.MNT_DETACH) })
	}
	populateRoot(t, root)
	transition(t, root, Request{To: "base", New: baseSet(), Record: record("base")})
	if !h.later {
		h.setup(t, root)
	}
	return root
}

// runHazard runs base → next as the agent would, with a rollback on failure; crash skips the
// rollback (the agent died) and leaves it to Recover. It returns the error of Begin or Apply
// and that of the rollback or recovery. A later hazard is set up after Begin, then found
// describes the root as the transaction should leave it.
func runHazard(t testing.TB, root string, h hazard, crash bool, found *map[string]string) (err, undoErr error) {
	ctx := context.Background()
	r, err := noderoot.Open(root)
	if err != nil {
		return err, nil
	}
	defer r.Close()
	a := &Applier{Root: r, Systemd: fakeSystemd{}}
	txn, err := a.Begin(ctx, h.request())
	if err != nil {
		return err, nil
	}
	if h.later {
		h.setup(t, root)
		*found = snapshot(t, root)
		for p := range *found { // Begin's, not the hazard's
			if strings.HasPrefix("/"+p, JournalPath) {
				delete(*found, p)
			}
		}
	}
	if err = txn.Apply(ctx); err == nil {
		return errors.New("Apply succeeded"), txn.Commit(ctx)
	}
	if h.beforeUndo != nil {
		h.beforeUndo(t, root)
	}
	if !crash {
		return err, txn.Rollback(ctx)
	}
	r2, rerr := noderoot.Open(root)
	if rerr != nil {
		return err, rerr
	}
	defer r2.Close()
	rec, rerr := (&Applier{Root: r2, Systemd: fakeSystemd{}}).Recover(ctx)
	if rerr == nil && rec.Outcome != RolledBack {
		rerr = errors.New("Recover did not roll back")
	}
	return err, rerr
}

// TestHazardsRollBackExactly: for each hazard, Begin refuses or Apply fails naming the path
// and the reason, the rollback (or Recover after a crash) returns the root to exactly what the
// transaction found, no journal remains, nothing appears outside the root, and the next good
// transaction goes through.
func TestHazardsRollBackExactly(t *testing.T) {
	for _, h := range hazards() {
		for _, crash := range []bool{false, true} {
			if crash && h.refused {
				continue
			}
			name := h.name
			if crash {
				name += ", crash then Recover"
			}
			t.Run(name, func(t *testing.T) {
				root := hazardRoot(t, h)
				before := snapshot(t, root)
				err, undoErr := runHazard(t, root, h, crash, &before)
				if err == nil || !strings.Contains(err.Error(), h.wantErr) {
					t.Errorf("error = %v, want it to contain %q", err, h.wantErr)
				}
				if undoErr != nil {
					t.Fatalf("undoing: %v", undoErr)
				}
				if h.settle != nil && !h.refused {
					h.settle(t, root)
				}
				checkUndone(t, root, before)
				if h.settle != nil && h.refused {
					h.settle(t, root)
				}
				checkNextTransaction(t, root)
			})
		}
	}
}

func checkUndone(t testing.TB, root string, before map[string]string) {
	t.Helper()
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		slices.Sort(d)
		t.Errorf("root differs from before the transaction:\n%s", strings.Join(d, "\n"))
	}
	if entries, _ := os.ReadDir(filepath.Join(filepath.Dir(root), "outside")); len(entries) > 0 {
		t.Errorf("%d entries appeared outside the root", len(entries))
	}
}

// checkNextTransaction: nothing is stuck; a transaction that avoids the hazard goes through.
func checkNextTransaction(t testing.TB, root string) {
	t.Helper()
	absent(t, root, strings.TrimPrefix(JournalPath, "/"))
	absent(t, root, strings.TrimPrefix(BackupDir, "/"))
	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	ctx := context.Background()
	a := &Applier{Root: r, Systemd: fakeSystemd{}}
	txn, err := a.Begin(ctx, Request{From: "base", To: "good", Old: baseSet(),
		New: fileSet(map[string]string{"/etc/chrony.conf": "server good\n"}), Record: record("good")})
	if err != nil {
		t.Fatalf("the next transaction: %v", err)
	}
	must(t, txn.Apply(ctx))
	must(t, txn.Commit(ctx))
	if got := readFile(t, root, "etc/chrony.conf"); got != "server good\n" {
		t.Errorf("chrony.conf = %q after the next transaction", got)
	}
}

// fakeSystemd fails enabling, which runs after every file is written.
type fakeSystemd struct{}

func (fakeSystemd) Enable(context.Context, ...string) error         { return errors.New("enable failed") }
func (fakeSystemd) Disable(context.Context, ...string) error        { return nil }
func (fakeSystemd) Preset(context.Context, ...string) error         { return nil }
func (fakeSystemd) IsEnabled(context.Context, string) (bool, error) { return false, nil }
func (fakeSystemd) Reload(context.Context, string) error            { return nil }
func (fakeSystemd) Restart(context.Context, string) error           { return nil }
func (fakeSystemd) DaemonReload(context.Context) error              { return nil }

var _ systemd.Manager = fakeSystemd{}

func immutable(t testing.TB, p string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", p).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i %s: %v: %s", p, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", p).Run() })
}

func readOnlyBind(t testing.TB, dir string) {
	t.Helper()
	must(t, unix.Mount(dir, dir, "", unix.MS_BIND, ""))
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	must(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))
}

// fill writes p until the file system has no block left.
func fill(t testing.TB, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	must(t, err)
	defer f.Close()
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			buf = buf[:len(buf)/2]
		}
	}
}

func fileSize(t testing.TB, p string) int64 {
	info, err := os.Stat(p)
	must(t, err)
	return info.Size()
}

func removeIfAny(p string) error {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
