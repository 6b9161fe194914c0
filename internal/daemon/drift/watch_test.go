package drift

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// monitorRun is a monitor started on a root of 3 files in 3 directories (plus the masked unit's
// directory), with what it reported collected.
type monitorRun struct {
	root     string
	results  chan error
	statuses chan WatchStatus
}

// runMonitor starts m (Checker, Report and OnWatch filled in) until the test ends, after
// prepare (if any) changed the root.
func runMonitor(t *testing.T, m *Monitor, prepare ...func(root string)) *monitorRun {
	t.Helper()
	r, s := rootWith(t, 3)
	for _, p := range prepare {
		p(r.Path())
	}
	c, err := NewChecker(r, s)
	if err != nil {
		t.Fatal(err)
	}
	run := &monitorRun{root: r.Path(), results: make(chan error, 1000), statuses: make(chan WatchStatus, 1000)}
	m.Checker = c
	m.Report = func(err error) { run.results <- err }
	m.OnWatch = func(st WatchStatus) { run.statuses <- st }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done }) // before the root closes
	return run
}

// awaitDrift waits for a report of drift (true) or of none (false).
func (run *monitorRun) awaitDrift(t *testing.T, want bool, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case err := <-run.results:
			if (err != nil) == want {
				return
			}
		case <-deadline:
			t.Fatalf("no report (drift=%v) within %v", want, within)
		}
	}
}

func (run *monitorRun) awaitStatus(t *testing.T, what string, cond func(WatchStatus) bool) WatchStatus {
	t.Helper()
	deadline := time.After(reportBound)
	for {
		select {
		case st := <-run.statuses:
			if cond(st) {
				return st
			}
		case <-deadline:
			t.Fatalf("no watch status %s within %v", what, reportBound)
		}
	}
}

func (run *monitorRun) edit(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(run.root, p), []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func failWatcher(err error) func() (*fsnotify.Watcher, error) {
	return func() (*fsnotify.Watcher, error) { return nil, err }
}

// failAdd refuses watches on directories whose name contains any of names, as the kernel does
// once fs.inotify.max_user_watches is reached.
func failAdd(err error, names ...string) func(*fsnotify.Watcher, string) error {
	return func(w *fsnotify.Watcher, dir string) error {
		for _, n := range names {
			if strings.Contains(dir, n) {
				return err
			}
		}
		return w.Add(dir)
	}
}

// TestMonitorFallsBackToThePeriodicCheck: whatever the kernel refuses, the monitor keeps
// running, says what is unwatched and why, and the periodic check still finds the drift in an
// unwatched directory.
func TestMonitorFallsBackToThePeriodicCheck(t *testing.T) {
	const dirs = 4 // d0, d1, d2 and /etc/systemd/system
	cases := []struct {
		name          string
		newWatcher    func() (*fsnotify.Watcher, error)
		add           func(*fsnotify.Watcher, string) error
		wantFailure   WatchFailure
		wantErr       error
		wantUnwatched int
	}{
		{"inotify instance limit", failWatcher(syscall.EMFILE), nil, NoWatcher, syscall.EMFILE, dirs},
		{"inotify watch limit", nil, failAdd(syscall.ENOSPC, "/"), DirsUnwatched, syscall.ENOSPC, dirs},
		{"watch limit reached partway", nil, failAdd(syscall.ENOSPC, "/d1", "/d2"), DirsUnwatched, syscall.ENOSPC, 2},
		{"watching", nil, nil, "", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := runMonitor(t, &Monitor{Interval: 20 * time.Millisecond, newWatcher: tc.newWatcher, addWatch: tc.add})
			st := run.awaitStatus(t, "at start", func(WatchStatus) bool { return true })
			if st.Failure != tc.wantFailure || !errors.Is(st.Err, tc.wantErr) || st.Unwatched != tc.wantUnwatched || st.Dirs != dirs {
				t.Errorf("status at start = %+v (%s); want failure %q, error %v, %d of %d unwatched",
					st, st, tc.wantFailure, tc.wantErr, tc.wantUnwatched, dirs)
			}
			if st.Degraded() != (tc.wantUnwatched > 0) {
				t.Errorf("Degraded() = %v with %d unwatched", st.Degraded(), st.Unwatched)
			}
			run.awaitDrift(t, false, reportBound)
			run.edit(t, "/etc/bench/d2/file-2.conf")
			run.awaitDrift(t, true, reportBound)
		})
	}
}

// TestMonitorIgnoresMissingDirectories: a directory that is not there is drift, not a failure
// to watch; once it is back it is watched.
func TestMonitorIgnoresMissingDirectories(t *testing.T) {
	watchers := make(chan *fsnotify.Watcher, 1)
	run := runMonitor(t, &Monitor{Interval: 20 * time.Millisecond, newWatcher: func() (*fsnotify.Watcher, error) {
		w, err := fsnotify.NewWatcher()
		watchers <- w
		return w, err
	}}, func(root string) {
		if err := os.RemoveAll(filepath.Join(root, "etc/bench/d1")); err != nil {
			t.Fatal(err)
		}
	})
	w := <-watchers
	st := run.awaitStatus(t, "at start", func(WatchStatus) bool { return true })
	if st.Failure != "" || st.Degraded() {
		t.Errorf("a missing directory counted as a failure to watch: %s", st)
	}
	run.awaitDrift(t, true, reportBound)
	dir := filepath.Join(run.root, "etc/bench/d1")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "file-1.conf"), []byte(strings.Repeat("x", 200)+"/etc/bench/d1/file-1.conf"), 0o644); err != nil {
		t.Fatal(err)
	}
	run.awaitDrift(t, false, reportBound)
	eventuallyTrue(t, "the directory watched once it is back", func() bool { return slices.Contains(w.WatchList(), dir) })
}

// TestMonitorWatchesAgainWhenTheLimitAllows: the periodic check retries watching and says so
// when every directory is watched again.
func TestMonitorWatchesAgainWhenTheLimitAllows(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	run := runMonitor(t, &Monitor{Interval: 20 * time.Millisecond, newWatcher: func() (*fsnotify.Watcher, error) {
		if refuse.Load() {
			return nil, syscall.EMFILE
		}
		return fsnotify.NewWatcher()
	}})
	run.awaitStatus(t, "failing", func(st WatchStatus) bool { return st.Failure == NoWatcher })
	refuse.Store(false)
	run.awaitStatus(t, "watching again", func(st WatchStatus) bool { return st.Failure == "" && !st.Degraded() })
}

// TestMonitorChecksAtOnceWhenEventsAreLost: an overflowed event queue is reported and checked
// right away, long before the periodic check.
func TestMonitorChecksAtOnceWhenEventsAreLost(t *testing.T) {
	watchers := make(chan *fsnotify.Watcher, 1)
	run := runMonitor(t, &Monitor{
		Interval: time.Hour,
		newWatcher: func() (*fsnotify.Watcher, error) {
			w, err := fsnotify.NewWatcher()
			watchers <- w
			return w, err
		},
		// Watches that see nothing: the edit below is news only through the overflow.
		addWatch: func(*fsnotify.Watcher, string) error { return nil },
	})
	w := <-watchers
	run.awaitDrift(t, false, reportBound)
	run.edit(t, "/etc/bench/d2/file-2.conf")
	select {
	case err := <-run.results:
		t.Fatalf("reported %v without any event; the test's watches must see nothing", err)
	case <-time.After(200 * time.Millisecond):
	}
	w.Errors <- fsnotify.ErrEventOverflow
	run.awaitDrift(t, true, reportBound)
	st := run.awaitStatus(t, "events lost", func(st WatchStatus) bool { return st.Failure == EventsLost })
	if !errors.Is(st.Err, fsnotify.ErrEventOverflow) || st.Degraded() {
		t.Errorf("status after the overflow = %s; want the overflow, still watching", st)
	}
}

// reportBound bounds a wait for what must come: far below the periodic check's hour where a
// test relies on events, far above what a loaded 2-core machine delays a goroutine by.
const reportBound = 30 * time.Second

func eventuallyTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(reportBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
