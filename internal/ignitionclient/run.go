// Package ignitionclient runs the real Ignition client against a directory, the way a booting
// machine runs it against its disk: the fetch stage (follow the pointer config to the server)
// then the files stage (write files, units, users under the root). The dev cluster provisions
// its nodes with it, and tests use it to play a new machine.
package ignitionclient

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// StageTimeout bounds each stage: Ignition retries an unreachable server forever.
const StageTimeout = 90 * time.Second

// Run boots root from pointer with the ignition binary, keeping Ignition's own state in work.
// It returns Ignition's combined output.
func Run(ctx context.Context, bin string, pointer []byte, root, work string) (string, error) {
	return RunStages(ctx, bin, pointer, root, work, nil)
}

// RunStages is Run with beforeFiles called between the stages with the config the fetch stage
// resolved (the pointer followed, merges applied), before anything is written under root.
func RunStages(ctx context.Context, bin string, pointer []byte, root, work string, beforeFiles func(config []byte) error) (string, error) {
	for _, d := range []string{root, work, filepath.Join(work, "sys"), filepath.Join(work, "run"), filepath.Join(work, "local")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	// Ignition drops privileges for some reads and needs to traverse its work directory.
	if err := os.Chmod(work, 0o755); err != nil {
		return "", err
	}
	for name, content := range map[string][]byte{"config.ign": pointer, "cmdline": nil} {
		if err := os.WriteFile(filepath.Join(work, name), content, 0o644); err != nil {
			return "", err
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
		stageCtx, cancel := context.WithTimeout(ctx, StageTimeout)
		cmd := exec.CommandContext(stageCtx, bin, "--platform", "file", "--stage", stage, "--root", root, "--log-to-stdout",
			"--config-cache", filepath.Join(work, "ignition.json"), "--neednet", filepath.Join(work, "neednet"),
			"--state-file", filepath.Join(work, "state"))
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			return out.String(), fmt.Errorf("ignition %s stage: %w", stage, err)
		}
		if stage == "fetch" && beforeFiles != nil {
			config, err := os.ReadFile(filepath.Join(work, "ignition.json"))
			if err == nil {
				err = beforeFiles(config)
			}
			if err != nil {
				return out.String(), err
			}
		}
	}
	return out.String(), nil
}
