// Package failpoint lets crash tests stop the agent at a chosen step. In production the
// environment variable is unset and Hit costs one atomic add.
package failpoint

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// KillAtEnv: the N-th Hit (1-based) kills the process with SIGKILL, like a power cut.
const KillAtEnv = "MCO_DAEMON_KILL_AT"

// PauseAtEnv: the N-th Hit creates PausedFile and blocks forever, so a test can cut a whole
// machine's power at that step.
const PauseAtEnv = "MCO_DAEMON_PAUSE_AT"

// PausedFile is created when the agent pauses at PauseAtEnv.
const PausedFile = "/run/mco-daemon-paused"

var (
	hits    atomic.Int64
	killAt  = envInt(KillAtEnv)
	pauseAt = envInt(PauseAtEnv)
)

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// Hit marks a step boundary.
func Hit() {
	n := hits.Add(1)
	if killAt > 0 && n == killAt {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives asynchronously
	}
	if pauseAt > 0 && n == pauseAt {
		_ = os.WriteFile(PausedFile, []byte(strconv.FormatInt(pauseAt, 10)+"\n"), 0o644)
		select {}
	}
}
