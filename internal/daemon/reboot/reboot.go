// Package reboot restarts a node after an update that needs it.
package reboot

import (
	"context"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Rebooter queues a reboot; it returns once the reboot is queued, not when it happens.
type Rebooter interface {
	Reboot(ctx context.Context, reason string) error
}

// Func adapts a function (tests, the dev cluster).
type Func func(ctx context.Context, reason string) error

func (f Func) Reboot(ctx context.Context, reason string) error { return f(ctx, reason) }

// Systemd reboots through a transient unit, so the reboot is owned by systemd and not by the
// agent process, which is about to be killed by it.
type Systemd struct {
	Root string
	Run  systemd.Runner
}

func (s Systemd) Reboot(ctx context.Context, reason string) error {
	args := []string{"--unit", "machine-config-daemon-reboot", "--description", "machine-config-daemon: " + reason,
		// systemd-run returns once the unit is queued; if systemd then fails to start it (seen
		// on dev machines: 219/CGROUP), systemd tries again instead of leaving the node waiting
		// for the agent's RebootTimeout.
		"--property=Restart=on-failure", "--property=RestartSec=5s",
		"/bin/sh", "-c", "systemctl reboot"}
	if err := systemd.RunInRoot(ctx, s.Run, s.Root, "systemd-run", args...); err != nil {
		return fmt.Errorf("queueing reboot: %w", err)
	}
	return nil
}
