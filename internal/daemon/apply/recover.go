package apply

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

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
