package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRaiseHostLimitsRaisesNeverLowers(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"128\n", "1024\n"},
		{"1024\n", "1024\n"},
		{"65536\n", "65536\n"},
	} {
		procSys := t.TempDir()
		path := filepath.Join(procSys, inotifyInstancesSetting)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
			t.Fatal(err)
		}
		said, err := raiseHostLimits(procSys)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != c.after {
			t.Errorf("from %q: the limit is %q, want %q", c.before, got, c.after)
		}
		if changed := c.before != c.after; changed != strings.Contains(said, "raised") {
			t.Errorf("from %q: said %q", c.before, said)
		}
	}
	if _, err := raiseHostLimits(t.TempDir()); err == nil || !strings.Contains(err.Error(), "inotify") {
		t.Errorf("without the setting: %v, want an error naming it", err)
	}
}
