package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// MountProc gives the test's node root a real procfs at root/proc, as a node's root has, until
// the test ends. It fails, never skips, without root: make test runs as root, and a test of
// links into /proc that skipped would pass without checking anything.
func MountProc(t testing.TB, root string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("mounting proc needs root (make test runs as root)")
	}
	dir := filepath.Join(root, "proc")
	if err := os.MkdirAll(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", dir, "proc", 0, ""); err != nil {
		t.Fatalf("mounting proc at %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
}
