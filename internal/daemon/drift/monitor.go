package drift

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Monitor re-checks a Checker whenever a watched file changes and every Interval, and hands
// the first result and then each one that differs from the last reported to Report: the
// consumer acts on changes, and an idle node must not be woken every Interval to learn that
// nothing moved. Report runs on the monitor's goroutine; a nil error means no drift.
type Monitor struct {
	Checker  *Checker
	Interval time.Duration
	Report   func(error)
	// Settle coalesces bursts of events (an editor writes, renames and chmods) into one check.
	Settle time.Duration
	// OnWatch, when set, hears how the monitor learns of changes: once at the start, after
	// each failed attempt to watch (the monitor then relies on the periodic check and tries
	// again at each one), when events were lost, and when every directory is watched again.
	// It runs on the monitor's goroutine.
	OnWatch func(WatchStatus)

	// newWatcher and addWatch are inotify_init and inotify_add_watch; tests put the kernel's
	// limits in their place.
	newWatcher func() (*fsnotify.Watcher, error)
	addWatch   func(*fsnotify.Watcher, string) error
}

// Run checks until ctx ends. It never gives up on a failure to watch: without watches, drift
// is still found by the periodic check. Watches go on the parent directories of the config's
// paths, because editors and our own writes replace files by rename, which a watch on the file
// itself would not survive.
func (m *Monitor) Run(ctx context.Context) {
	newWatcher, add := m.newWatcher, m.addWatch
	if newWatcher == nil {
		newWatcher = fsnotify.NewWatcher
	}
	if add == nil {
		add = addWatch
	}
	ws := newWatches(m.Checker, newWatcher, add)
	defer ws.close()
	st, _ := ws.establish()
	m.onWatch(st)
	degraded := st.Degraded()
	settle := m.Settle
	if settle == 0 {
		settle = 50 * time.Millisecond
	}
	tick := time.NewTicker(m.Interval)
	defer tick.Stop()
	var pending <-chan time.Time
	last := m.Checker.Check()
	m.Report(last)
	check := func() {
		if err := m.Checker.Check(); !sameResult(err, last) {
			last = err
			m.Report(err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-ws.events():
			if ws.tracked[ev.Name] && pending == nil {
				pending = time.After(settle)
			}
		case err := <-ws.errors():
			// An overflowed queue lost events: whatever they were, a check now sees it.
			st := ws.status()
			st.Failure, st.Err = EventsLost, err
			m.onWatch(st)
			check()
		case <-pending:
			pending = nil
			check()
		case <-tick.C:
			if len(ws.pending) > 0 {
				st, failed := ws.establish()
				if failed || st.Degraded() != degraded {
					m.onWatch(st)
				}
				degraded = st.Degraded()
			}
			check()
		}
	}
}

func (m *Monitor) onWatch(st WatchStatus) {
	if m.OnWatch != nil {
		m.OnWatch(st)
	}
}

// sameResult compares by message: a drift found again is a new error value, and a different
// message (another file, another mismatch) is news the Node's reason must show.
func sameResult(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
