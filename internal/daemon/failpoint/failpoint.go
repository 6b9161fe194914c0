// Package failpoint lets crash tests stop the agent at a chosen step. In production nothing
// arms it and Hit costs one atomic add.
//
// A test arms it with an environment variable (an agent started by the test or by a unit), or,
// for an agent in a pod, which a test cannot give an environment of its own per node, with
// ArmFile on the node's root: the agent reads and removes it when it starts, so it fires once
// per arming (a restarted agent recovers instead of dying at the same step again).
package failpoint

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// KillAtEnv: the N-th Hit (1-based) kills the process with SIGKILL, like a power cut.
const KillAtEnv = "MCO_DAEMON_KILL_AT"

// PauseAtEnv: the N-th Hit creates PausedFile and blocks forever, so a test can cut a whole
// machine's power at that step.
const PauseAtEnv = "MCO_DAEMON_PAUSE_AT"

// Files on the node's root: PausedFile is created when the agent pauses; ArmFile holds
// NAME=N lines (KillAtEnv, PauseAtEnv); FiredFile records a kill ("killed KILL <unix time>")
// just before it happens, as a unit's ExecStopPost would.
const (
	PausedFile = "/run/mco-daemon-paused"
	ArmFile    = "/run/mco-daemon-failpoint"
	FiredFile  = "/run/mco-daemon-failpoint-fired"
)

var (
	hits    atomic.Int64
	killAt  = envInt(KillAtEnv)
	pauseAt = envInt(PauseAtEnv)
	root    = "/"
)

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// Load takes an arming left in ArmFile under the node root nodeRoot, and removes it. It
// returns an error only for a file it cannot read or remove, or whose lines it does not know.
func Load(nodeRoot string) error {
	root = nodeRoot
	path := filepath.Join(nodeRoot, ArmFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case err != nil || n < 1:
			return fmt.Errorf("%s: %q: want NAME=N, N >= 1", path, line)
		case name == KillAtEnv:
			killAt = n
		case name == PauseAtEnv:
			pauseAt = n
		default:
			return fmt.Errorf("%s: unknown failpoint %q (want %s or %s)", path, name, KillAtEnv, PauseAtEnv)
		}
	}
	return nil
}

// Hit marks a step boundary.
func Hit() {
	n := hits.Add(1)
	if killAt > 0 && n == killAt {
		now := float64(time.Now().UnixNano()) / 1e9
		_ = os.WriteFile(filepath.Join(root, FiredFile), []byte(fmt.Sprintf("killed KILL %.6f\n", now)), 0o644)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives asynchronously
	}
	if pauseAt > 0 && n == pauseAt {
		_ = os.WriteFile(filepath.Join(root, PausedFile), []byte(strconv.FormatInt(pauseAt, 10)+"\n"), 0o644)
		select {}
	}
}
