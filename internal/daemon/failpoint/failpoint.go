// Package failpoint lets crash tests stop the agent at a chosen step. In production the
// environment variables are unset and Hit costs one atomic add.
package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

const (
	// KillAtEnv: the N-th Hit (1-based) kills the process with SIGKILL, like a power cut.
	KillAtEnv = "MCO_DAEMON_KILL_AT"
	// FailAtEnv: the Hit with this name returns an error (a failing step, for rollback tests).
	FailAtEnv = "MCO_DAEMON_FAIL_AT"
	// TraceEnv: print every Hit to stderr, so a test can count the steps.
	TraceEnv = "MCO_DAEMON_FAILPOINT_TRACE"
)

var (
	hits   atomic.Int64
	killAt = envInt(KillAtEnv)
	failAt = os.Getenv(FailAtEnv)
	trace  = os.Getenv(TraceEnv) != ""
)

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// Hit marks a step boundary.
func Hit(name string) error {
	n := hits.Add(1)
	if trace {
		fmt.Fprintf(os.Stderr, "failpoint %d %s\n", n, name)
	}
	if killAt > 0 && n == killAt {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives asynchronously
	}
	if failAt != "" && failAt == name {
		return fmt.Errorf("failpoint %s", name)
	}
	return nil
}
