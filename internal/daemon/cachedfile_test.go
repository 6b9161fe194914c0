package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// countingRoot is a node root that counts the files it reads.
type countingRoot struct {
	*noderoot.Root
	reads int
}

func (r *countingRoot) ReadFile(p string) ([]byte, error) {
	r.reads++
	return r.Root.ReadFile(p)
}

// A kept file is read again when a stat says it changed (content, size, times, inode), and not
// otherwise; a file changed within racyWindow of the read is not kept at all.
func TestCachedFileReadsAgainOnlyWhenChanged(t *testing.T) {
	const path = "/etc/containerd/config.toml"
	written := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := func() time.Time { return time.Now().Add(time.Hour) } // the file's ctime is long past
	for _, tc := range []struct {
		name   string
		before string // the file at the first read; "" missing
		change func(t *testing.T, file string)
		now    func() time.Time
		want   string // at the second read; "" for nil
		reads  int    // ReadFile calls over both reads
	}{
		{name: "unchanged", before: "version = 2\n", now: later, want: "version = 2\n", reads: 1},
		{name: "rewritten to the same size with another mtime", before: "version = 2\n",
			change: func(t *testing.T, f string) { writeWithMtime(t, f, "version = 3\n", written.Add(time.Second)) },
			now:    later, want: "version = 3\n", reads: 2},
		{name: "replaced by a rename, same size and mtime", before: "version = 2\n",
			change: func(t *testing.T, f string) {
				writeWithMtime(t, f+".new", "version = 3\n", written)
				if err := os.Rename(f+".new", f); err != nil {
					t.Fatal(err)
				}
			},
			now: later, want: "version = 3\n", reads: 2},
		{name: "appended to", before: "version = 2\n",
			change: func(t *testing.T, f string) { writeWithMtime(t, f, "version = 2\n[plugins]\n", written) },
			now:    later, want: "version = 2\n[plugins]\n", reads: 2},
		{name: "removed", before: "version = 2\n",
			change: func(t *testing.T, f string) {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			},
			now: later, want: "", reads: 2},
		{name: "created", change: func(t *testing.T, f string) { writeWithMtime(t, f, "version = 2\n", written) },
			now: later, want: "version = 2\n", reads: 2},
		// Same size and mtime, and within the same clock tick the same ctime: only the racy
		// window tells this file apart from the one read.
		{name: "rewritten just after the read, same size and times", before: "version = 2\n",
			change: func(t *testing.T, f string) { writeWithMtime(t, f, "version = 3\n", written) },
			now:    time.Now, want: "version = 3\n", reads: 2},
		{name: "unchanged but written just before the read", before: "version = 2\n", now: time.Now, want: "version = 2\n", reads: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.before != "" {
				writeWithMtime(t, file, tc.before, written)
			}
			nr, err := noderoot.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer nr.Close()
			root := &countingRoot{Root: nr}
			var c cachedFile
			first, err := c.read(root, path, tc.now())
			if err != nil || string(first) != tc.before {
				t.Fatalf("first read %q, %v; want %q", first, err, tc.before)
			}
			if tc.change != nil {
				tc.change(t, file)
			}
			second, err := c.read(root, path, tc.now())
			if err != nil || string(second) != tc.want || (second == nil) != (tc.want == "") {
				t.Errorf("second read %q, %v; want %q", second, err, tc.want)
			}
			if root.reads != tc.reads {
				t.Errorf("read the file %d times, want %d", root.reads, tc.reads)
			}
		})
	}
}

// writeWithMtime writes file with data and sets its mtime.
func writeWithMtime(t *testing.T, file, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
