package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// Rollback returns the root to exactly where Begin found it.
func (t *Txn) Rollback(ctx context.Context) error {
	return t.a.rollback(ctx, t.j)
}

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
			return err
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

func restorePrior(r *noderoot.Root, pr prior) error {
	switch pr.Kind {
	case priorAbsent:
		return r.Remove(pr.Path, true)
	case priorSymlink:
		return r.Symlink(pr.Path, pr.Target, true)
	case priorFile:
		// Copy rather than link back: the backup must survive until the journal is gone in
		// case this rollback is itself interrupted.
		return r.CopyFile(pr.Backup, pr.Path, true)
	}
	return fmt.Errorf("unknown prior kind %q", pr.Kind)
}

// removeTemps deletes temp files an interrupted atomic write left next to touched paths.
func removeTemps(r *noderoot.Root, paths []string) error {
	byDir := map[string][]string{}
	for _, p := range paths {
		byDir[path.Dir(p)] = append(byDir[path.Dir(p)], "."+path.Base(p)+".mco-")
	}
	for dir, prefixes := range byDir {
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

// Outcome is what Recover found.
type Outcome int

const (
	// Clean: no transaction was in progress.
	Clean Outcome = iota
	// RolledBack: an uncommitted transaction was undone; the root is in From.
	RolledBack
	// Completed: the transaction had committed; only its journal was left to drop.
	Completed
)

// Recovery reports a Recover.
type Recovery struct {
	Outcome  Outcome
	From, To string
}

// Recover finishes what a crash interrupted: a journal whose target is already the committed
// currentconfig is dropped, any other is rolled back. Run it before anything reads the root.
func (a *Applier) Recover(ctx context.Context) (Recovery, error) {
	if err := removeTemps(a.Root, []string{JournalPath, CurrentConfigPath}); err != nil {
		return Recovery{}, err
	}
	j, err := readJournal(a.Root)
	if err != nil {
		return Recovery{}, err
	}
	if j == nil {
		return Recovery{Outcome: Clean}, a.cleanBackups()
	}
	committed, err := CommittedName(a.Root)
	if err != nil {
		return Recovery{}, err
	}
	rec := Recovery{From: j.From, To: j.To}
	if committed == j.To && j.To != j.From {
		rec.Outcome = Completed
		return rec, a.finish()
	}
	rec.Outcome = RolledBack
	return rec, a.rollback(ctx, j)
}

// CommittedName is the metadata.name of the MachineConfig in currentconfig, "" when absent.
func CommittedName(r *noderoot.Root) (string, error) {
	data, err := ReadCommitted(r)
	if err != nil || data == nil {
		return "", err
	}
	var meta struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("corrupt %s: %w", CurrentConfigPath, err)
	}
	return meta.Metadata.Name, nil
}

// ReadCommitted returns the currentconfig record, nil when there is none.
func ReadCommitted(r *noderoot.Root) ([]byte, error) {
	data, err := r.ReadFile(CurrentConfigPath)
	if noderoot.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}
