package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// TestInstallBootGuard: the binary, unit and wants link land inside the root, replacing links
// planted at their paths instead of writing through them; a second install changes nothing.
func TestInstallBootGuard(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"usr/local/bin", "etc/systemd/system/multi-user.target.wants"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bootguard.BinaryPath, bootguard.UnitPath} {
		if err := os.Symlink(victim, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/null", filepath.Join(dir, bootguard.WantsPath)); err != nil {
		t.Fatal(err)
	}
	r, err := noderoot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	self, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true to install")
	}
	a := &Agent{root: r, opts: Options{GuardBinary: "/bin/true"}}
	for range 2 {
		if err := a.installBootGuard(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("wrote through a planted link: %q", got)
	}
	info, err := os.Lstat(filepath.Join(dir, bootguard.BinaryPath))
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o755 {
		t.Fatalf("binary: %v %v", info, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, bootguard.BinaryPath)); string(got) != string(self) {
		t.Error("the binary is not a copy of GuardBinary")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, bootguard.UnitPath)); string(got) != bootguard.Unit {
		t.Errorf("unit %q", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, bootguard.WantsPath)); err != nil || target != bootguard.UnitPath {
		t.Errorf("wants link → %q (%v), want %s", target, err, bootguard.UnitPath)
	}
}
