package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// Rollback returns the root to exactly where Begin found it, as far as this transaction
// changed it.
func (t *Txn) Rollback(ctx context.Context) error {
	j := *t.j
	// In this process the directories Apply made are known exactly; the journal lists them
	// before they exist (a crash leaves only that list to Recover).
	j.CreatedDirs = t.created
	return t.a.rollback(ctx, &j)
}

// rollback undoes only what the journal says the transaction did or was about to do, in
// reverse, and is idempotent: an interrupted rollback is finished by running it again. What it
// finds that the transaction cannot have left (a directory or special file where it wrote a
// file, a path whose parent is no longer a directory) is someone else's and stays as it is;
// failing on it would leave the journal, and every later update, stuck.
func (a *Applier) rollback(ctx context.Context, j *journal) error {
	r := a.Root
	touched := make([]string, 0, len(j.Priors))
	for i := len(j.Priors) - 1; i >= 0; i-- {
		pr := j.Priors[i]
		if err := restorePrior(r, pr); err != nil {
			return fmt.Errorf("rolling back %s: %w", pr.Path, err)
		}
		touched = append(touched, pr.Path)
		failpoint.Hit()
	}
	if err := removeTemps(r, touched); err != nil {
		return err
	}
	for i := len(j.CreatedDirs) - 1; i >= 0; i-- {
		if err := r.RemoveEmptyDir(j.CreatedDirs[i]); err != nil {
			return fmt.Errorf("rolling back %s: %w", j.CreatedDirs[i], err)
		}
	}
	if j.SnapshotUnit {
		if err := restoreUnitLinks(r, j.UnitLinks, j.UnitDirs); err != nil {
			return fmt.Errorf("restoring unit enablement: %w", err)
		}
	}
	if j.OSStaged && a.OS != nil {
		if err := a.OS.Discard(ctx); err != nil {
			return err
		}
	}
	if err := r.SyncDirs(touched); err != nil {
		return err
	}
	return a.finish()
}

// restorePrior puts back what was at pr.Path, unless it is already there, and never through a
// link planted on the host since (or before an older agent journaled it).
func restorePrior(r *noderoot.Root, pr prior) error {
	if planted, err := behindPlantedLink(r, pr.Path); err != nil || planted {
		return err
	}
	now, err := r.Lstat(pr.Path)
	if err != nil {
		return err
	}
	switch now.Type {
	case noderoot.Directory, noderoot.Other:
		return nil // the transaction writes only files and symlinks
	case noderoot.Missing:
		if pr.Kind == priorAbsent {
			return nil
		}
		// Missing because the parent is gone or no directory: nothing to restore it into,
		// and not the transaction's doing (it never replaces a directory).
		if ok, err := r.IsDir(path.Dir(pr.Path)); err != nil || !ok {
			return err
		}
	}
	switch pr.Kind {
	case priorAbsent:
		return r.Remove(pr.Path, true)
	case priorSymlink:
		if now.Type == noderoot.Symlink && now.Target == pr.Target {
			return nil
		}
		return r.Symlink(pr.Path, pr.Target, true)
	case priorFile:
		return restoreFile(r, pr, now)
	}
	return fmt.Errorf("unknown prior kind %q", pr.Kind)
}

// restoreFile links the backup back over the path: that writes no data, so it also works on a
// full file system, and the backup keeps its name in case this rollback is interrupted. A
// copied backup (another file system) is copied back.
func restoreFile(r *noderoot.Root, pr prior, now noderoot.Info) error {
	backup, err := r.Lstat(pr.Backup)
	if err != nil {
		return err
	}
	if now.Type == noderoot.Regular && (sameFile(now, backup) || (pr.Ino != 0 && now.Ino == pr.Ino && now.Dev == pr.Dev)) {
		return nil // never replaced, or restored by an interrupted rollback
	}
	if backup.Type != noderoot.Regular {
		return fmt.Errorf("its backup %s is gone", pr.Backup)
	}
	lerr := r.LinkOver(pr.Backup, pr.Path, true)
	if lerr == nil {
		return nil
	}
	if err := r.CopyFile(pr.Backup, pr.Path, true); err != nil {
		return errors.Join(lerr, err)
	}
	return nil
}

func sameFile(a, b noderoot.Info) bool {
	return a.Type == noderoot.Regular && b.Type == noderoot.Regular && a.Ino == b.Ino && a.Dev == b.Dev
}

// removeTemps deletes temp files an interrupted atomic write left next to touched paths.
func removeTemps(r *noderoot.Root, paths []string) error {
	byDir := map[string][]string{}
	for _, p := range paths {
		byDir[path.Dir(p)] = append(byDir[path.Dir(p)], "."+path.Base(p)+".mco-")
	}
	for dir, prefixes := range byDir {
		// A name inside dir: its parents are dir's own path and links.
		if planted, err := behindPlantedLink(r, path.Join(dir, "temp")); err != nil || planted {
			if err != nil {
				return err
			}
			continue
		}
		entries, err := r.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			for _, pre := range prefixes {
				if strings.HasPrefix(e.Name(), pre) {
					if err := r.Remove(path.Join(dir, e.Name()), true); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
