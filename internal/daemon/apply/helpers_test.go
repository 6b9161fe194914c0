package apply

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/ignition"
)

// requireSystemctl fails (never skips) without systemctl: CI installs the systemd package.
func requireSystemctl(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("systemctl"); err != nil {
		t.Fatal("systemctl not found: install the systemd package (apt-get install systemd)")
	}
}

// newNodeRoot makes a small node root: accounts with a core user, a file that predates any
// MachineConfig, and a vendor unit.
func newNodeRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	populateRoot(t, root)
	return root
}

func populateRoot(t testing.TB, root string) {
	t.Helper()
	files := map[string]string{
		"etc/passwd":                             "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/home/core:/bin/bash\n",
		"etc/group":                              "root:x:0:\nwheel:x:10:core\ncore:x:1000:\n",
		"etc/shadow":                             "root:*:19000:0:99999:7:::\ncore:!!:19000:0:99999:7:::\n",
		"etc/chrony.conf":                        "pool 2.pool.ntp.org iburst\n",
		"usr/lib/systemd/system/kubelet.service": "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
	}
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Chmod(filepath.Join(root, "etc/chrony.conf"), 0o640))
	must(t, os.Chmod(filepath.Join(root, "etc/shadow"), 0o600))
	must(t, os.MkdirAll(filepath.Join(root, "home/core"), 0o700))
	must(t, os.Chown(filepath.Join(root, "home/core"), 1000, 1000))
	must(t, os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func setOf(t testing.TB, ign string) nodefiles.Set {
	t.Helper()
	cfg, err := ignition.Parse([]byte(ign))
	if err != nil {
		t.Fatal(err)
	}
	s, err := nodefiles.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func record(name string) []byte { return []byte(fmt.Sprintf(`{"metadata":{"name":%q}}`, name)) }

// transition applies and commits from → to on root.
func transition(t testing.TB, rootDir string, req Request) {
	t.Helper()
	if err := runTransition(context.Background(), rootDir, req); err != nil {
		t.Fatal(err)
	}
}

func runTransition(ctx context.Context, rootDir string, req Request) error {
	r, err := noderoot.Open(rootDir)
	if err != nil {
		return err
	}
	defer r.Close()
	a := &Applier{Root: r, Systemd: systemd.New(rootDir)}
	if _, err := a.Recover(ctx); err != nil {
		return err
	}
	txn, err := a.Begin(ctx, req)
	if err != nil {
		return err
	}
	if err := txn.Apply(ctx); err != nil {
		return fmt.Errorf("%w (rollback: %v)", err, txn.Rollback(ctx))
	}
	return txn.Commit(ctx)
}

// snapshot describes every entry under root: type, mode, owner and content or link target.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v %d:%d", info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnapshots(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only in first: "+k)
		} else if v != w {
			out = append(out, fmt.Sprintf("%s: %s != %s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only in second: "+k)
		}
	}
	return out
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput()
	if err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

func readFile(t testing.TB, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func statOf(t testing.TB, root, p string) (fs.FileMode, int, int) {
	t.Helper()
	info, err := os.Lstat(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	return info.Mode(), int(st.Uid), int(st.Gid)
}

func absent(t testing.TB, root, p string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
		t.Errorf("%s should not exist (err=%v)", p, err)
	}
}

type setT = nodefiles.Set

// panicTB lets test helpers run in a child process that has no *testing.T.
type panicTB struct{ testing.TB }

func (*panicTB) Helper()                   {}
func (*panicTB) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (*panicTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
