package daemon

import (
	"context"
	"time"

	"github.com/mco-dev/mco/internal/daemon/drift"
)

// checkDrift returns the disk's drift from config name (nil when in sync). The first time a
// config is checked in this session the check is full (every content, unit enablement) and a
// monitor starts watching; afterwards the monitor's latest finding is the answer.
func (a *Agent) checkDrift(ctx context.Context, l *loaded, name string) (error, error) {
	if a.s.checker == nil || a.s.checkedConfig != name {
		a.stopMonitor()
		c, err := drift.NewChecker(a.root, l.set)
		if err != nil {
			return nil, err
		}
		derr := c.CheckFull(ctx, a.opts.Systemd)
		if _, isDrift := derr.(*drift.Error); derr != nil && !isDrift {
			return nil, derr
		}
		a.s.checker, a.s.checkedConfig, a.s.lastDrift = c, name, derr
		a.startMonitor(ctx)
	}
	return a.latestDrift(), nil
}

// startMonitor watches the current config until an update starts.
func (a *Agent) startMonitor(ctx context.Context) {
	if a.s.stopMonitor != nil || a.s.checker == nil {
		return
	}
	mctx, cancel := context.WithCancel(ctx)
	a.s.stopMonitor = cancel
	a.s.drift = make(chan error, 1)
	results := a.s.drift
	m := &drift.Monitor{Checker: a.s.checker, Interval: a.opts.DriftInterval, Report: func(err error) {
		// Keep only the latest result; the loop reads it on its next wake-up.
		select {
		case <-results:
		default:
		}
		results <- err
		a.poke()
	}, OnWatch: a.driftWatch.observe}
	go m.Run(mctx)
}

// stopMonitor stops watching (an update is about to change the files on purpose).
func (a *Agent) stopMonitor() {
	if a.s.stopMonitor != nil {
		a.s.stopMonitor()
		a.s.stopMonitor = nil
	}
	a.s.checker, a.s.checkedConfig, a.s.lastDrift, a.s.drift = nil, "", nil, nil
}

// latestDrift is the monitor's newest result, or the last one the loop saw.
func (a *Agent) latestDrift() error {
	if a.s.drift != nil {
		select {
		case err := <-a.s.drift:
			a.s.lastDrift = err
		default:
		}
	}
	return a.s.lastDrift
}

func nowUnix() float64 { return float64(time.Now().Unix()) }
