package noderoot

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/testenv"
)

// TestResolveParents plants links in a root and reads back what resolving a path's parents
// inside it met: the links in order, where each points, and where the parent ends up.
func TestResolveParents(t *testing.T) {
	cases := []struct {
		name     string
		links    map[string]string // path in the root → target
		path     string
		hops     []Hop
		resolved string
		existing string
	}{
		{name: "no link", path: "/etc/a/f", resolved: "/etc/a", existing: "/etc/a"},
		{name: "missing parents", path: "/etc/new/deeper/f", resolved: "/etc/new/deeper", existing: "/etc"},
		{name: "relative link inside", links: map[string]string{"/etc/x": "../usr/lib"}, path: "/etc/x/f",
			hops: []Hop{{Link: "/etc/x", Target: "../usr/lib", Into: "/usr/lib"}}, resolved: "/usr/lib", existing: "/usr/lib"},
		{name: "climbing link stops at the root", links: map[string]string{"/etc/x": "../../../../../../../../tmp"}, path: "/etc/x/f",
			hops: []Hop{{Link: "/etc/x", Target: "../../../../../../../../tmp", Into: "/tmp"}}, resolved: "/tmp", existing: "/tmp"},
		{name: "absolute link resolved from the root", links: map[string]string{"/etc/x": "/usr/lib"}, path: "/etc/x/sub/f",
			hops: []Hop{{Link: "/etc/x", Target: "/usr/lib", Into: "/usr/lib"}}, resolved: "/usr/lib/sub", existing: "/usr/lib"},
		{name: "chain", links: map[string]string{"/etc/x": "/usr/y", "/usr/y": "lib"}, path: "/etc/x/f",
			hops:     []Hop{{Link: "/etc/x", Target: "/usr/y", Into: "/usr/y"}, {Link: "/usr/y", Target: "lib", Into: "/usr/lib"}},
			resolved: "/usr/lib", existing: "/usr/lib"},
		{name: "dangling link", links: map[string]string{"/etc/x": "/nowhere/deep"}, path: "/etc/x/f",
			hops: []Hop{{Link: "/etc/x", Target: "/nowhere/deep", Into: "/nowhere/deep"}}, resolved: "/nowhere/deep", existing: "/"},
		{name: "link to a regular file", links: map[string]string{"/etc/x": "/etc/a/file"}, path: "/etc/x/f",
			hops: []Hop{{Link: "/etc/x", Target: "/etc/a/file", Into: "/etc/a/file"}}, resolved: "/etc/a/file", existing: "/etc/a"},
		{name: "final component is never followed", links: map[string]string{"/etc/x": "/proc"}, path: "/etc/x",
			resolved: "/etc", existing: "/etc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range []string{"etc/a", "usr/lib", "tmp"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "etc/a/file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for p, target := range c.links {
				if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := r.ResolveParents(c.path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Hops, c.hops) || got.Resolved != c.resolved || got.Existing != c.existing || got.Loops {
				t.Errorf("got hops %+v resolved %q existing %q loops %v\nwant hops %+v resolved %q existing %q",
					got.Hops, got.Resolved, got.Existing, got.Loops, c.hops, c.resolved, c.existing)
			}
			if (len(got.Hops) > 0) != (got.FSType != 0) {
				t.Errorf("file system type %#x with %d hops: told only when a link was met", got.FSType, len(got.Hops))
			}
		})
	}
}

func TestResolveParentsStopsALoop(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/b", filepath.Join(dir, "etc/a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/a", filepath.Join(dir, "etc/b")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ResolveParents("/etc/a/f")
	if err != nil || !got.Loops || len(got.Hops) != maxHops {
		t.Fatalf("loops %v after %d hops, err %v", got.Loops, len(got.Hops), err)
	}
}

// TestResolveParentsIntoProc: a link into the root's own /proc (a real procfs, as on a node)
// is followed the way the node would, and the file system it ends on is told.
func TestResolveParentsIntoProc(t *testing.T) {
	r := rootWithProcLink(t)
	got, err := r.ResolveParents("/etc/y/comm")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hops) != 2 || got.Hops[0].Into != "/proc/self" || got.Hops[1].Link != "/proc/self" || got.FSType != unix.PROC_SUPER_MAGIC {
		t.Errorf("hops %+v resolved %q fs %#x", got.Hops, got.Resolved, got.FSType)
	}
}

// TestSyncDirsSkipsKernelFileSystems: fsync of a /proc directory fails with EINVAL; a path a
// planted link leads there must not fail the sync that ends a commit or a rollback.
func TestSyncDirsSkipsKernelFileSystems(t *testing.T) {
	r := rootWithProcLink(t)
	if err := r.SyncDirs([]string{"/etc/y/comm", "/etc/passwd"}); err != nil {
		t.Fatal(err)
	}
}

// rootWithProcLink is a root with a real procfs at /proc and /etc/y a link to /proc/self.
func rootWithProcLink(t *testing.T) *Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.MountProc(t, dir)
	if err := os.Symlink("/proc/self", filepath.Join(dir, "etc/y")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
