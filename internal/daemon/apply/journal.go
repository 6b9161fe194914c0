package apply

import (
	"encoding/json"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// priorKind is what a touched path was before the transaction.
type priorKind string

const (
	priorAbsent  priorKind = "absent"
	priorFile    priorKind = "file"
	priorSymlink priorKind = "symlink"
)

type prior struct {
	Path string    `json:"path"`
	Kind priorKind `json:"kind"`
	// Backup is the path (in the root) of a copy of the file, for priorFile.
	Backup string `json:"backup,omitempty"`
	Target string `json:"target,omitempty"`
}

type link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// journal is the on-disk record of a transaction in progress.
type journal struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Priors lists every path the transaction may change, in the order it changes them.
	Priors []prior `json:"priors"`
	// CreatedDirs are directories that did not exist, outermost first.
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// UnitLinks and UnitDirs snapshot /etc/systemd/system when enablement changes, because
	// systemctl decides itself which symlinks enable a unit.
	UnitLinks    []link   `json:"unitLinks,omitempty"`
	UnitDirs     []string `json:"unitDirs,omitempty"`
	SnapshotUnit bool     `json:"snapshotUnits,omitempty"`
	// OSStaged: the OS backend may have staged a deployment that a rollback must discard.
	OSStaged bool `json:"osStaged,omitempty"`
}

func writeJournal(r *noderoot.Root, j *journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return r.WriteFile(JournalPath, data, noderoot.WriteOptions{Perm: 0o600})
}

func readJournal(r *noderoot.Root) (*journal, error) {
	info, err := r.Lstat(JournalPath)
	if err != nil || info.Type == noderoot.Missing {
		return nil, err
	}
	data, err := r.ReadFile(JournalPath)
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("corrupt journal %s: %w", JournalPath, err)
	}
	return &j, nil
}
