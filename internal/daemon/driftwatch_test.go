package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mco-dev/mco/internal/daemon/drift"
)

// TestDriftWatchLogsOnceAndExports: statuses from successive monitors become the gauge, the
// error counter by kind, and one log line per change of how drift is found.
func TestDriftWatchLogsOnceAndExports(t *testing.T) {
	noWatcher := drift.WatchStatus{Unwatched: 4, Dirs: 4, Failure: drift.NoWatcher, Err: syscall.EMFILE}
	noWatch := drift.WatchStatus{Unwatched: 1, Dirs: 4, Failure: drift.DirsUnwatched, Err: syscall.ENOSPC}
	watching := drift.WatchStatus{Dirs: 4}
	lost := drift.WatchStatus{Dirs: 4, Failure: drift.EventsLost, Err: fsnotify.ErrEventOverflow}
	cases := []struct {
		name     string
		statuses []drift.WatchStatus
		degraded float64
		errors   map[string]float64
		logs     []string
	}{
		{"watching", []drift.WatchStatus{watching, watching}, 0, nil, nil},
		{"no inotify instance, retried", []drift.WatchStatus{noWatcher, noWatcher, noWatcher}, 1,
			map[string]float64{"watcher": 3}, []string{"level=ERROR msg=\"drift monitor cannot watch"}},
		{"watch limit, then watching", []drift.WatchStatus{noWatch, watching}, 0,
			map[string]float64{"watch": 1}, []string{"level=ERROR", "level=INFO msg=\"drift monitor watches every directory"}},
		{"a new monitor still limited", []drift.WatchStatus{noWatch, noWatcher}, 1,
			map[string]float64{"watch": 1, "watcher": 1}, []string{"level=ERROR"}},
		{"events lost", []drift.WatchStatus{watching, lost}, 0,
			map[string]float64{"events": 1}, []string{"level=WARN msg=\"drift monitor lost file events"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			m := newMetrics(prometheus.NewRegistry())
			d := &driftWatch{log: slog.New(slog.NewTextHandler(&out, nil)), metrics: m, interval: 30 * time.Second}
			for _, st := range tc.statuses {
				d.observe(st)
			}
			if got := testutil.ToFloat64(m.driftWatchDegraded); got != tc.degraded {
				t.Errorf("mcd_drift_watch_degraded = %v, want %v", got, tc.degraded)
			}
			for _, kind := range []string{"watcher", "watch", "events"} {
				if got := testutil.ToFloat64(m.driftWatchErrors.WithLabelValues(kind)); got != tc.errors[kind] {
					t.Errorf("mcd_drift_watch_errors_total{kind=%q} = %v, want %v", kind, got, tc.errors[kind])
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if out.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tc.logs) {
				t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(tc.logs), out.String())
			}
			for i, want := range tc.logs {
				if !strings.Contains(lines[i], want) {
					t.Errorf("log line %d = %s\nwant it to contain %s", i, lines[i], want)
				}
			}
		})
	}
}
