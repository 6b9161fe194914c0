package daemon

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mco-dev/mco/internal/daemon/drift"
)

// driftWatch turns the drift monitor's watch statuses into the agent's log and metrics. A
// monitor that cannot watch still checks periodically, so this is no Node condition; but an
// admin must be able to see that drift now takes up to the check interval to be noticed.
// It outlives each monitor (one per checked config), so a limit that stays hit is logged once.
type driftWatch struct {
	log      *slog.Logger
	metrics  *metrics
	interval time.Duration
	degraded atomic.Bool
}

// observe runs on the monitor's goroutine.
func (d *driftWatch) observe(st drift.WatchStatus) {
	if st.Failure != "" {
		d.metrics.driftWatchErrors.WithLabelValues(string(st.Failure)).Inc()
	}
	degraded := st.Degraded()
	if degraded {
		d.metrics.driftWatchDegraded.Set(1)
	} else {
		d.metrics.driftWatchDegraded.Set(0)
	}
	was := d.degraded.Swap(degraded)
	switch {
	case st.Failure == drift.EventsLost:
		d.log.Warn("drift monitor lost file events; checked the disk at once", "err", st.Err)
	case degraded && !was:
		d.log.Error("drift monitor cannot watch the config's directories; drift there is found by the periodic check only",
			"unwatched", st.Unwatched, "dirs", st.Dirs, "interval", d.interval, "err", st.Err)
	case !degraded && was:
		d.log.Info("drift monitor watches every directory of the config again", "dirs", st.Dirs)
	}
}
