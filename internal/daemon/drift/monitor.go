package drift

import (
	"context"
	"path"
	"time"

	securejoin "github.com/cyphar/filepath-securejoin"
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
}

// Run watches until ctx ends. Watches go on the parent directories of the config's paths,
// because editors and our own writes replace files by rename, which a watch on the file itself
// would not survive.
func (m *Monitor) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	tracked := m.watch(w)
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
			return nil
		case ev := <-w.Events:
			if tracked[ev.Name] && pending == nil {
				pending = time.After(settle)
			}
		case <-w.Errors:
			// An overflowed queue loses events; the periodic check still catches the drift.
		case <-pending:
			pending = nil
			check()
		case <-tick.C:
			check()
		}
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

// watch adds the existing parent directories and returns the host paths worth reacting to.
func (m *Monitor) watch(w *fsnotify.Watcher) map[string]bool {
	rootPath := m.Checker.root.Path()
	tracked := map[string]bool{}
	dirs := map[string]bool{}
	for _, e := range m.Checker.set.Entries {
		hostDir, err := securejoin.SecureJoin(rootPath, path.Dir(e.Path))
		if err != nil {
			continue
		}
		tracked[path.Join(hostDir, path.Base(e.Path))] = true
		if !dirs[hostDir] {
			dirs[hostDir] = true
			_ = w.Add(hostDir) // a missing directory is drift the periodic check reports
		}
	}
	return tracked
}
