package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RunIgnition runs the real Ignition client (built by `make tools`) with pointer as its config:
// the fetch and files stages against a fresh root, each bounded by a timeout, since Ignition
// retries unreachable servers forever. It returns the root and the combined output; a missing
// binary fails the test.
func RunIgnition(t testing.TB, pointer []byte) (root, output string, err error) {
	t.Helper()
	bin := RequireTool(t, "ignition")
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(work, "root")
	for _, d := range []string{root, filepath.Join(work, "sys"), filepath.Join(work, "run"), filepath.Join(work, "local")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string][]byte{"config.ign": pointer, "cmdline": nil} {
		if err := os.WriteFile(filepath.Join(work, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(),
		"IGNITION_CONFIG_FILE="+filepath.Join(work, "config.ign"),
		"IGNITION_KERNEL_CMDLINE_PATH="+filepath.Join(work, "cmdline"),
		"IGNITION_SYSTEM_CONFIG_DIR="+filepath.Join(work, "sys"),
		"IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="+filepath.Join(work, "run"),
		"IGNITION_SYSTEM_LOCAL_CONFIG_DIR="+filepath.Join(work, "local"),
	)
	var out bytes.Buffer
	for _, stage := range []string{"fetch", "files"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, "--platform", "file", "--stage", stage, "--root", root, "--log-to-stdout",
			"--config-cache", filepath.Join(work, "ignition.json"), "--neednet", filepath.Join(work, "neednet"),
			"--state-file", filepath.Join(work, "state"))
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		cancel()
		if err != nil {
			return root, out.String(), err
		}
	}
	return root, out.String(), nil
}
