package daemon

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// RebootPendingPath records the config whose commit still needs a reboot. It lives in /run,
// which every boot starts empty (a real node's tmpfs, and a dev machine's), so it says "not
// rebooted since" without a boot id (dev machines share the host's kernel, and with it the
// boot id).
const RebootPendingPath = "/run/machine-config-daemon/reboot-pending"

func (a *Agent) markRebootPending(config string) error {
	a.s.rebootPending = nil // unknown until written
	if _, err := a.root.MkdirAll(path.Dir(RebootPendingPath), noderoot.DirSpec{Perm: 0o755}); err != nil {
		return err
	}
	if err := a.root.WriteFile(RebootPendingPath, []byte(config+"\n"), noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return err
	}
	a.s.rebootPending = &config
	return nil
}

// rebootPendingFor reports whether config was committed to be rebooted into during this boot.
// The record is read once per process (settle asks on every pass): only the agent writes it,
// and every boot empties /run.
func (a *Agent) rebootPendingFor(config string) (bool, error) {
	if a.s.rebootPending == nil {
		data, err := a.root.ReadFile(RebootPendingPath)
		if err != nil && !noderoot.IsNotExist(err) {
			return false, err
		}
		name := strings.TrimSpace(string(data))
		a.s.rebootPending = &name
	}
	return config != "" && *a.s.rebootPending == config, nil
}

// clearRebootPending drops the record once a later config was applied without a reboot: the
// node is no longer waiting for the one it names.
func (a *Agent) clearRebootPending() error {
	if a.s.rebootPending != nil && *a.s.rebootPending == "" {
		return nil
	}
	if err := a.root.Remove(RebootPendingPath, false); err != nil {
		a.s.rebootPending = nil
		return err
	}
	none := ""
	a.s.rebootPending = &none
	return nil
}

// maxRebootRequests is how often one agent process asks for a reboot that never comes before
// it reports the node Degraded instead of asking again.
const maxRebootRequests = 3

// rebootOverdue: the queued reboot should have ended this process by now.
func (a *Agent) rebootOverdue() bool {
	return time.Since(a.s.rebootQueuedAt) >= a.opts.RebootTimeout
}

// rebootAgain asks for the reboot a committed config waits for, at most maxRebootRequests
// times per process.
func (a *Agent) rebootAgain(ctx context.Context, current string) error {
	if a.s.rebootRequests >= maxRebootRequests {
		return degraded("RebootFailed", fmt.Errorf(
			"config %s is written and needs a reboot, but %d reboots asked for over %s never happened; check the node's systemd (journalctl -u machine-config-daemon-reboot) and reboot it by hand",
			current, a.s.rebootRequests, time.Duration(a.s.rebootRequests)*a.opts.RebootTimeout))
	}
	return a.reboot(ctx, current, "the reboot into this committed config did not happen")
}
