package server

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce collapses the burst of events one edit causes (editors write a temp file, rename it,
// chmod it) into one reload.
const debounce = 200 * time.Millisecond

// watchFiles calls reload whenever something under the given paths changes, until ctx ends.
// Directories are watched recursively (new subdirectories included); for a file its directory
// is watched, so replacing the file by rename (how editors and Kubernetes volumes update
// files) is seen too. Missing paths are skipped: they may appear later inside a watched dir.
func watchFiles(ctx context.Context, paths []string, reload func(), log *slog.Logger) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	for _, p := range paths {
		if p == "" {
			continue
		}
		info, err := os.Stat(p)
		switch {
		case err != nil:
			log.Warn("not watching missing path", "path", p, "err", err)
		case info.IsDir():
			addTree(w, p, log)
		default:
			if err := w.Add(filepath.Dir(p)); err != nil {
				log.Warn("cannot watch", "path", p, "err", err)
			}
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					addTree(w, ev.Name, log)
				}
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			log.Warn("file watch error", "err", err)
		case <-timer.C:
			reload()
		}
	}
}

func addTree(w *fsnotify.Watcher, root string, log *slog.Logger) {
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if err := w.Add(path); err != nil {
				log.Warn("cannot watch", "path", path, "err", err)
			}
		}
		return nil
	})
}
