package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// StuckError is a journaled transaction whose rollback failed again.
type StuckError struct {
	From, To string
	Err      error
}

// interruptedUpdate names a journaled update for an admin.
func interruptedUpdate(from, to string) string {
	if from == "" && to == "" {
		return "an interrupted update (its journal is unreadable)"
	}
	return fmt.Sprintf("the update from %q to %q", from, to)
}

func (e *StuckError) Error() string {
	what := interruptedUpdate(e.From, e.To)
	return fmt.Sprintf("%s is still journaled in %s: %v\n"+
		"Repair what the error names and run `mco daemon recover` again, or give the rollback up with "+
		"`mco daemon recover --abandon` (the agent then rewrites the desired config in full)",
		what, apply.JournalPath, e.Err)
}

func (e *StuckError) Unwrap() error { return e.Err }

// RecoverRoot settles an interrupted transaction in a node root now, as the agent does when
// it starts and on each retry (`mco daemon recover`); a rollback that fails again is a
// *StuckError.
func RecoverRoot(ctx context.Context, rootDir string) (apply.Recovery, error) {
	a, closeRoot, err := applierFor(rootDir)
	if err != nil {
		return apply.Recovery{}, err
	}
	defer closeRoot()
	rec, err := a.Recover(ctx)
	if err != nil {
		from, to, _, _ := a.Journaled()
		return apply.Recovery{}, &StuckError{From: from, To: to, Err: err}
	}
	return rec, nil
}

// Abandoned is what AbandonJournal gave up.
type Abandoned struct {
	From, To string
	// SavedTo holds the journal and its backups (a path in the root).
	SavedTo string
}

// AbandonJournal gives up a journaled transaction without rolling it back (`mco daemon
// recover --abandon`) and creates the force file: the root is in neither config, and only a
// full rewrite of the desired config, which the force file asks the agent for, makes it one
// again. nil when nothing was journaled (the force file is then left alone).
func AbandonJournal(rootDir string, now time.Time) (*Abandoned, error) {
	a, closeRoot, err := applierFor(rootDir)
	if err != nil {
		return nil, err
	}
	defer closeRoot()
	saveTo := abandonedJournalPath(now)
	from, to, ok, err := a.Abandon(saveTo)
	if err != nil || !ok {
		return nil, err
	}
	if err := a.Root.WriteFile(ForceFilePath, nil, noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return nil, fmt.Errorf("abandoned the update from %q to %q (kept in %s) but creating %s failed: %w", from, to, saveTo, ForceFilePath, err)
	}
	return &Abandoned{From: from, To: to, SavedTo: saveTo}, nil
}

// applierFor is the applier the agent would use on rootDir: the same OS backend, so a rollback
// discards what its transaction staged.
func applierFor(rootDir string) (*apply.Applier, func(), error) {
	root, err := noderoot.Open(rootDir)
	if err != nil {
		return nil, nil, err
	}
	opts := Options{Root: rootDir}
	opts.defaults(root)
	return &apply.Applier{Root: root, Systemd: opts.Systemd, OS: opts.OS}, func() { root.Close() }, nil
}
