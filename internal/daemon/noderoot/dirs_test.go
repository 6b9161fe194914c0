package noderoot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func openTest(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMissingDirsNamesWhatIsInTheWay: a component that is not a directory is reported with
// what it is instead; nothing is created through it.
func TestMissingDirsNamesWhatIsInTheWay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(root string)
		want  string
	}{
		{"dangling symlink", func(root string) { os.Symlink("/nowhere", filepath.Join(root, "etc/x")) },
			`/etc/x is a symlink to "/nowhere", which does not exist inside the node root`},
		{"symlink out of the root", func(root string) { os.Symlink("../../../../../../tmp", filepath.Join(root, "etc/x")) },
			`/etc/x is a symlink to "../../../../../../tmp", which does not exist inside the node root`},
		{"symlink to a file", func(root string) {
			os.WriteFile(filepath.Join(root, "etc/f"), nil, 0o644)
			os.Symlink("f", filepath.Join(root, "etc/x"))
		}, `/etc/x is a symlink to "f", which is not a directory inside the node root`},
		{"symlink loop", func(root string) { os.Symlink("x", filepath.Join(root, "etc/x")) },
			`/etc/x is a symlink to "x", which loops`},
		{"regular file", func(root string) { os.WriteFile(filepath.Join(root, "etc/x"), nil, 0o644) },
			`/etc/x is a regular file, not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mustDo(t, os.Mkdir(filepath.Join(root, "etc"), 0o755))
			tc.setup(root)
			r := openTest(t, root)
			for _, dir := range []string{"/etc/x", "/etc/x/a/b"} {
				_, err := r.MissingDirs(dir)
				var nd *NotDirError
				if !errors.As(err, &nd) || err.Error() != tc.want {
					t.Errorf("MissingDirs(%s) = %v, want %q", dir, err, tc.want)
				}
				created, err := r.MkdirAll(dir, DefaultDir)
				if err == nil || !strings.Contains(err.Error(), tc.want) || len(created) > 0 {
					t.Errorf("MkdirAll(%s) = %v, %v; want nothing created and %q", dir, created, err, tc.want)
				}
			}
			if entries, _ := os.ReadDir(filepath.Join(root, "etc")); len(entries) != 1 && tc.name != "symlink to a file" {
				t.Errorf("etc has %d entries, want only x", len(entries))
			}
		})
	}
}

// TestMkdirAllReportsOnlyWhatItCreated: directories that exist, also through an in-root
// symlink, are not reported; the ones made through the symlink land at its target.
func TestMkdirAllReportsOnlyWhatItCreated(t *testing.T) {
	root := t.TempDir()
	mustDo(t, os.MkdirAll(filepath.Join(root, "etc/y"), 0o755))
	mustDo(t, os.Symlink("/etc/y", filepath.Join(root, "etc/x")))
	r := openTest(t, root)
	created, err := r.MkdirAll("/etc/x/a/b", DirSpec{Perm: 0o750, UID: 12, GID: 34})
	mustDo(t, err)
	if strings.Join(created, " ") != "/etc/x/a /etc/x/a/b" {
		t.Errorf("created %q", created)
	}
	info, err := os.Lstat(filepath.Join(root, "etc/y/a/b"))
	mustDo(t, err)
	if st := info.Sys().(*syscall.Stat_t); info.Mode().Perm() != 0o750 || st.Uid != 12 || st.Gid != 34 {
		t.Errorf("etc/y/a/b: %v %d:%d", info.Mode(), st.Uid, st.Gid)
	}
	if created, err := r.MkdirAll("/etc/x/a/b", DefaultDir); err != nil || len(created) != 0 {
		t.Errorf("second MkdirAll = %q, %v", created, err)
	}
}

// TestUndoToleratesWhatItFinds: removing a directory that is now something else, or whose
// parent no longer resolves, leaves it alone; reading and syncing such paths finds nothing.
func TestUndoToleratesWhatItFinds(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc/full", "etc/empty", "etc/real"} {
		mustDo(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	mustDo(t, os.WriteFile(filepath.Join(root, "etc/full/keep"), nil, 0o644))
	mustDo(t, os.WriteFile(filepath.Join(root, "etc/file"), nil, 0o644))
	mustDo(t, os.Symlink("/etc/real", filepath.Join(root, "etc/link")))
	mustDo(t, os.Symlink("/nowhere", filepath.Join(root, "etc/dangling")))
	mustDo(t, os.Symlink("loop", filepath.Join(root, "etc/loop")))
	r := openTest(t, root)
	for _, p := range []string{"/etc/full", "/etc/link", "/etc/file", "/etc/dangling", "/etc/loop", "/etc/file/sub", "/etc/dangling/sub", "/etc/loop/sub", "/etc/absent/sub"} {
		if err := r.RemoveEmptyDir(p); err != nil {
			t.Errorf("RemoveEmptyDir(%s): %v", p, err)
		}
	}
	for _, p := range []string{"/etc/file/sub", "/etc/dangling/sub", "/etc/loop/sub", "/etc/absent/sub"} {
		if info, err := r.Lstat(p); err != nil || info.Type != Missing {
			t.Errorf("Lstat(%s) = %+v, %v", p, info, err)
		}
		if err := r.Remove(p, true); err != nil {
			t.Errorf("Remove(%s): %v", p, err)
		}
		if entries, err := r.ReadDir(p); err != nil || entries != nil {
			t.Errorf("ReadDir(%s) = %v, %v", p, entries, err)
		}
		if ok, err := r.IsDir(p); ok || err != nil {
			t.Errorf("IsDir(%s) = %v, %v", p, ok, err)
		}
	}
	mustDo(t, r.SyncDirs([]string{"/etc/file/sub/x", "/etc/dangling/sub/x", "/etc/loop/sub/x"}))
	mustDo(t, r.RemoveEmptyDir("/etc/empty"))
	for _, p := range []string{"etc/full/keep", "etc/link", "etc/file", "etc/dangling", "etc/loop", "etc/real"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/empty")); !os.IsNotExist(err) {
		t.Errorf("empty directory not removed: %v", err)
	}
}

// TestLinkOverNeedsNoSpace restores a file from a hard-linked backup on a file system with no
// free block left, and leaves no temp link when the two are already the same file.
func TestLinkOverNeedsNoSpace(t *testing.T) {
	root := t.TempDir()
	mustDo(t, unix.Mount("tmpfs", root, "tmpfs", 0, "size=256k"))
	t.Cleanup(func() { unix.Unmount(root, unix.MNT_DETACH) })
	mustDo(t, os.WriteFile(filepath.Join(root, "backup"), []byte("old"), 0o640))
	mustDo(t, os.WriteFile(filepath.Join(root, "file"), []byte("new"), 0o644))
	fill(t, filepath.Join(root, "filler"))
	r := openTest(t, root)
	if err := r.CopyFile("/backup", "/file", true); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("the file system is not full: copy gave %v", err)
	}
	mustDo(t, r.LinkOver("/backup", "/file", true))
	mustDo(t, r.LinkOver("/backup", "/file", true))
	if data, _ := os.ReadFile(filepath.Join(root, "file")); string(data) != "old" {
		t.Errorf("file = %q", data)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 3 {
		t.Errorf("entries after restore: %v", entries)
	}
}

// fill writes p until the file system has no free block.
func fill(t *testing.T, p string) {
	t.Helper()
	f, err := os.Create(p)
	mustDo(t, err)
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
