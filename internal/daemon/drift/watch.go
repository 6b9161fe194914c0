package drift

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"syscall"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/fsnotify/fsnotify"
)

// WatchFailure is what failed in watching the config's directories. The values are metric
// labels.
type WatchFailure string

const (
	// NoWatcher: no inotify instance (EMFILE: fs.inotify.max_user_instances), nothing is watched.
	NoWatcher WatchFailure = "watcher"
	// DirsUnwatched: some directories got no watch (ENOSPC: fs.inotify.max_user_watches).
	DirsUnwatched WatchFailure = "watch"
	// EventsLost: the kernel's event queue overflowed (or the watcher failed), so changes may
	// have gone unseen.
	EventsLost WatchFailure = "events"
)

// WatchStatus is how the monitor learns of changes to the config's directories.
type WatchStatus struct {
	// Unwatched of Dirs directories are left to the periodic check (all without a watcher).
	// A directory that does not exist is not counted: its absence is drift the check reports.
	Unwatched, Dirs int
	// Failure and Err are what just went wrong; empty at a start or return to full watching.
	Failure WatchFailure
	Err     error
}

// Degraded reports whether some drift is found only by the periodic check.
func (s WatchStatus) Degraded() bool { return s.Unwatched > 0 }

func (s WatchStatus) String() string {
	switch {
	case s.Failure == EventsLost:
		return fmt.Sprintf("file events lost: %v", s.Err)
	case s.Failure != "":
		return fmt.Sprintf("%d of %d directories unwatched: %v", s.Unwatched, s.Dirs, s.Err)
	case s.Degraded():
		return fmt.Sprintf("%d of %d directories unwatched", s.Unwatched, s.Dirs)
	}
	return fmt.Sprintf("watching %d directories", s.Dirs)
}

// watches are the inotify watches on the config's parent directories. Whatever the kernel
// refuses is retried at each periodic check, so a freed-up limit brings watching back.
type watches struct {
	newWatcher func() (*fsnotify.Watcher, error)
	add        func(*fsnotify.Watcher, string) error

	w *fsnotify.Watcher
	// dirs are the host directories to watch, pending those without a watch yet.
	dirs    []string
	pending map[string]error
	// tracked are the host paths of the config's entries, the only events worth a check.
	tracked map[string]bool
}

func newWatches(c *Checker, newWatcher func() (*fsnotify.Watcher, error), add func(*fsnotify.Watcher, string) error) *watches {
	ws := &watches{newWatcher: newWatcher, add: add, tracked: map[string]bool{}, pending: map[string]error{}}
	rootPath := c.root.Path()
	for _, e := range c.set.Entries {
		hostDir, err := securejoin.SecureJoin(rootPath, path.Dir(e.Path))
		if err != nil {
			continue
		}
		ws.tracked[path.Join(hostDir, path.Base(e.Path))] = true
		if !slices.Contains(ws.dirs, hostDir) {
			ws.dirs = append(ws.dirs, hostDir)
			ws.pending[hostDir] = nil
		}
	}
	return ws
}

// establish creates the watcher if there is none and adds every pending directory. It returns
// the status and whether the attempt failed for a reason other than a missing directory.
func (ws *watches) establish() (WatchStatus, bool) {
	if ws.w == nil {
		w, err := ws.newWatcher()
		if err != nil {
			return WatchStatus{Unwatched: len(ws.dirs), Dirs: len(ws.dirs), Failure: NoWatcher, Err: err}, true
		}
		ws.w = w
	}
	var firstErr error
	for _, dir := range ws.dirs {
		if _, ok := ws.pending[dir]; !ok {
			continue
		}
		err := ws.add(ws.w, dir)
		if err == nil {
			delete(ws.pending, dir)
			continue
		}
		ws.pending[dir] = err
		if !absent(err) && firstErr == nil {
			firstErr = fmt.Errorf("watching %s: %w", dir, err)
		}
	}
	st := ws.status()
	if firstErr != nil {
		st.Failure, st.Err = DirsUnwatched, firstErr
	}
	return st, firstErr != nil
}

func (ws *watches) status() WatchStatus {
	if ws.w == nil {
		return WatchStatus{Unwatched: len(ws.dirs), Dirs: len(ws.dirs)}
	}
	st := WatchStatus{Dirs: len(ws.dirs)}
	for _, err := range ws.pending {
		if !absent(err) {
			st.Unwatched++
		}
	}
	return st
}

// absent: the directory is not there (or a component is no directory). That is drift the
// periodic check reports, not a failure to watch.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// events and errors are the watcher's channels; nil without a watcher, which a select never
// picks.
func (ws *watches) events() chan fsnotify.Event {
	if ws.w == nil {
		return nil
	}
	return ws.w.Events
}

func (ws *watches) errors() chan error {
	if ws.w == nil {
		return nil
	}
	return ws.w.Errors
}

func (ws *watches) close() {
	if ws.w != nil {
		ws.w.Close()
	}
}

func addWatch(w *fsnotify.Watcher, dir string) error { return w.Add(dir) }
