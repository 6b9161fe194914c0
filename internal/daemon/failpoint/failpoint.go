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
	"os/signal"
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

// HoldAtEnv: the N-th Hit creates PausedFile and blocks until the process gets SIGTERM (its pod
// replaced, the node shutting down), then records the release in FiredFile and returns: a step
// that was still running when the stop came.
const HoldAtEnv = "MCO_DAEMON_HOLD_AT"

// Files on the node's root: PausedFile is created when the agent pauses; ArmFile holds
// NAME=N lines (KillAtEnv, PauseAtEnv, HoldAtEnv); FiredFile records a kill ("killed KILL <unix time>")
// or a hold's release ("held N released TERM <unix time>")
// just before it happens, as a unit's ExecStopPost would.
const (
	PausedFile = "/run/mco-daemon-paused"
	ArmFile    = "/run/mco-daemon-failpoint"
	// FiredFile outlives a reboot (not in /run): a test reads it after the node went on.
	FiredFile = "/var/lib/mco-daemon-failpoint-fired"
)

var (
	hits    atomic.Int64
	killAt  = envInt(KillAtEnv)
	pauseAt = envInt(PauseAtEnv)
	holdAt  = envInt(HoldAtEnv)
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
		case name == HoldAtEnv:
			holdAt = n
		default:
			return fmt.Errorf("%s: unknown failpoint %q (want %s, %s or %s)", path, name, KillAtEnv, PauseAtEnv, HoldAtEnv)
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
	if holdAt > 0 && n == holdAt {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM)
		defer signal.Stop(stop)
		_ = os.WriteFile(filepath.Join(root, PausedFile), []byte(strconv.FormatInt(holdAt, 10)+"\n"), 0o644)
		<-stop
		now := float64(time.Now().UnixNano()) / 1e9
		_ = os.WriteFile(filepath.Join(root, FiredFile), []byte(fmt.Sprintf("held %d released TERM %.6f\n", holdAt, now)), 0o644)
	}
}
