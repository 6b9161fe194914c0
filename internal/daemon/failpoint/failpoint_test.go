package failpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	defer func() { killAt, pauseAt, root = 0, 0, "/" }()
	dir := t.TempDir()
	arm := filepath.Join(dir, ArmFile)
	if err := os.MkdirAll(filepath.Dir(arm), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Load(dir); err != nil || killAt != 0 || pauseAt != 0 {
		t.Fatalf("nothing armed: %v, kill %d pause %d", err, killAt, pauseAt)
	}
	if err := os.WriteFile(arm, []byte(KillAtEnv+"=3\n"+PauseAtEnv+"=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Load(dir); err != nil || killAt != 3 || pauseAt != 5 || root != dir {
		t.Fatalf("armed: %v, kill %d pause %d root %s", err, killAt, pauseAt, root)
	}
	if _, err := os.Stat(arm); !os.IsNotExist(err) {
		t.Errorf("the arming is still there after Load: it would fire again after the agent's restart")
	}
	for _, bad := range []string{"MCO_DAEMON_KILL_AT=x", "MCO_DAEMON_KILL_AT=0", "OTHER=1"} {
		if err := os.WriteFile(arm, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Load(dir); err == nil || !strings.Contains(err.Error(), ArmFile) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
