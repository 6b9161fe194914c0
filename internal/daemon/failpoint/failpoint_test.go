//go:build failpoints

package failpoint

// These test the failpoints themselves, so they build with them only; failpoint_off_test.go
// tests the build without.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// A hold blocks the step until SIGTERM, records the release and lets the step go on.
func TestHoldUntilSIGTERM(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{PausedFile, FiredFile} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { holdAt, root = 0, "/" }()
	root, holdAt = dir, hits.Load()+1
	returned := make(chan struct{})
	go func() { Hit(); close(returned) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, PausedFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hold never wrote PausedFile")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-returned:
		t.Fatal("Hit returned before SIGTERM")
	case <-time.After(100 * time.Millisecond):
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Hit still holds after SIGTERM")
	}
	if fired, _ := os.ReadFile(filepath.Join(dir, FiredFile)); !strings.HasPrefix(string(fired), "held ") || !strings.Contains(string(fired), " released TERM ") {
		t.Errorf("FiredFile = %q", fired)
	}
}
