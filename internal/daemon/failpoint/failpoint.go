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

var (
	hits   atomic.Int64
	killAt = envInt(KillAtEnv)
)

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// Hit marks a step boundary.
func Hit() {
	if n := hits.Add(1); killAt > 0 && n == killAt {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives asynchronously
	}
}
