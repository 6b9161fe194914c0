package noderoot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymlinksCannotEscapeTheRoot plants a symlink pointing outside the root, absolute or
// relative (with more ".." than the depth), at every parent position of the written path, and
// in the last position. Nothing may appear outside the root; what is written lands where the
// node itself would put it (its "/" is the root), or the write is refused.
func TestSymlinksCannotEscapeTheRoot(t *testing.T) {
	const target = "/etc/a/b/c/file"
	parents := []string{"/etc", "/etc/a", "/etc/a/b", "/etc/a/b/c"}
	for _, linkAt := range append(parents, target) {
		for _, kind := range []string{"absolute", "relative"} {
			t.Run(kind+linkAt, func(t *testing.T) {
				base := t.TempDir()
				rootDir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
				for _, d := range []string{rootDir, outside} {
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				// Pre-create the real parents up to the link, then the link.
				if err := os.MkdirAll(filepath.Join(rootDir, filepath.Dir(linkAt)), 0o755); err != nil {
					t.Fatal(err)
				}
				dest := outside
				if kind == "relative" {
					depth := strings.Count(linkAt, "/")
					dest = strings.Repeat("../", depth+3) + strings.TrimPrefix(outside, "/")
				}
				if linkAt == target {
					dest = filepath.Join(dest, "victim")
					if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("keep"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Symlink(dest, filepath.Join(rootDir, linkAt)); err != nil {
					t.Fatal(err)
				}
				r, err := Open(rootDir)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()

				_, mkErr := r.MkdirAll(filepath.Dir(target), DefaultDir)
				writeErr := r.WriteFile(target, []byte("data"), WriteOptions{Perm: 0o644})
				_ = r.Symlink(target+".lnk", "/x", false)
				_ = r.Remove(target+".gone", false)

				entries, _ := os.ReadDir(outside)
				for _, e := range entries {
					if linkAt == target && e.Name() == "victim" {
						if data, _ := os.ReadFile(filepath.Join(outside, "victim")); string(data) != "keep" {
							t.Errorf("write followed the final symlink and changed %s", e.Name())
						}
						continue
					}
					t.Errorf("escaped the root: %s was created outside it (mkdir err %v, write err %v)", e.Name(), mkErr, writeErr)
				}
				if writeErr == nil {
					if data, err := r.ReadFile(target); err != nil || string(data) != "data" {
						t.Errorf("write reported success but reading it back inside the root gives %q, %v", data, err)
					}
				}
			})
		}
	}
}

func TestReadRefusesFinalSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if data, err := r.ReadFile("/link"); err == nil {
		t.Fatalf("read through a final symlink: %q", data)
	}
	info, err := r.Lstat("/link")
	if err != nil || info.Type != Symlink || info.Target != outside {
		t.Fatalf("lstat = %+v, %v", info, err)
	}
}

func TestRejectsUncleanPaths(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{"etc/x", "/etc/../x", "/", "/etc//x", "/etc/x/"} {
		if err := r.WriteFile(p, nil, WriteOptions{Perm: 0o644}); err == nil {
			t.Errorf("WriteFile(%q) accepted", p)
		}
	}
}

func TestAccountsComeFromTheRoot(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("# c\nroot:x:0:0::/root:/bin/sh\nnobody4:x:4242:4343::/:/sbin/nologin\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "etc/group"), []byte("grp:x:777:\n"), 0o644)
	r, _ := Open(dir)
	defer r.Close()
	acc, err := r.LoadAccounts()
	if err != nil {
		t.Fatal(err)
	}
	if uid, err := acc.UID("nobody4"); err != nil || uid != 4242 {
		t.Errorf("uid = %d, %v", uid, err)
	}
	if gid, err := acc.GID("grp"); err != nil || gid != 777 {
		t.Errorf("gid = %d, %v", gid, err)
	}
	if gid, _ := acc.PrimaryGID("nobody4"); gid != 4343 {
		t.Errorf("primary gid = %d", gid)
	}
	if _, err := acc.UID("missing"); err == nil {
		t.Error("unknown user resolved")
	}
}
