//go:build !failpoints

package failpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// offChildEnv makes this test binary the "agent" of TestOffBuildCannotBeArmed: armed at
// start, as an agent in a unit would be, it hits the first steps and says it survived.
const offChildEnv = "MCO_FAILPOINT_TEST_CHILD"

// TestOffBuildCannotBeArmed: built without the tag, as the release agent is, neither the
// environment nor ArmFile arms anything, and ArmFile is not even removed (not read at all).
func TestOffBuildCannotBeArmed(t *testing.T) {
	if os.Getenv(offChildEnv) != "" {
		Hit()
		Hit()
		Hit()
		os.Stdout.WriteString("survived\n")
		os.Exit(0)
	}
	if Enabled {
		t.Fatal("Enabled in a build without the failpoints tag")
	}

	dir := t.TempDir()
	arm := filepath.Join(dir, ArmFile)
	if err := os.MkdirAll(filepath.Dir(arm), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arm, []byte(KillAtEnv+"=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Load(dir); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, err := os.Stat(arm); err != nil {
		t.Errorf("Load touched %s: %v", ArmFile, err)
	}
	Hit() // were the arming taken, this would SIGKILL the test binary

	// The environment is read at start, so a fresh process gets it. A bound far above a
	// child's start keeps a slow machine from failing this; only a pause or hold reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOffBuildCannotBeArmed$")
	cmd.Env = append(os.Environ(), offChildEnv+"=1", KillAtEnv+"=1", HoldAtEnv+"=2", PauseAtEnv+"=3")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "survived") {
		t.Fatalf("a child armed through %s, %s and %s did not get through its steps: %v\n%s", KillAtEnv, HoldAtEnv, PauseAtEnv, err, out)
	}
}
