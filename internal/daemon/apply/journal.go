package apply

import (
	"encoding/json"
	"fmt"
	"strconv"

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
	// Backup is the path (in the root) of a hard link to, or copy of, the file, for priorFile.
	Backup string `json:"backup,omitempty"`
	// Dev and Ino identify the file itself: still there, it was never replaced (a copied
	// backup is another inode, e.g. of an immutable file that refused both the link and the
	// rename).
	Dev    uint64 `json:"dev,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
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
	// CreatedDirs are the directories Apply is about to create, outermost first: absent when
	// journaled (at Begin, again by Apply if the disk changed since). A rollback removes them
	// only while they are empty directories: anything else there is not the transaction's.
	// (Earlier versions listed a dangling symlink as absent, and failed on it.)
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
	if err := r.WriteFile(JournalPath, data, noderoot.WriteOptions{Perm: 0o600}); err != nil {
		return fmt.Errorf("journaling the transaction: %w", err)
	}
	return nil
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

func (t *Txn) journalPriors() error {
	r := t.a.Root
	created, err := r.MkdirAll(BackupDir, noderoot.DirSpec{Perm: 0o700})
	t.stateDirs = created
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var backups []string
	for _, o := range t.ops {
		if seen[o.path] {
			continue
		}
		seen[o.path] = true
		pr, err := t.capture(o.path, len(t.j.Priors))
		if err != nil {
			return err
		}
		if pr.Backup != "" {
			backups = append(backups, pr.Backup)
		}
		t.j.Priors = append(t.j.Priors, pr)
	}
	if !t.units.empty() {
		links, dirs, err := snapshotUnitLinks(r)
		if err != nil {
			return err
		}
		t.j.UnitLinks, t.j.UnitDirs, t.j.SnapshotUnit = links, dirs, true
	}
	if err := r.SyncDirs(append(backups, BackupDir+"/x")); err != nil {
		return err
	}
	return writeJournal(r, t.j)
}

// capture saves what is at p now: a hard link (or copy) of a file, a symlink's target, or
// that nothing is there.
func (t *Txn) capture(p string, n int) (prior, error) {
	r := t.a.Root
	info, err := r.Lstat(p)
	if err != nil {
		return prior{}, err
	}
	switch info.Type {
	case noderoot.Missing:
		return prior{Path: p, Kind: priorAbsent}, nil
	case noderoot.Symlink:
		return prior{Path: p, Kind: priorSymlink, Target: info.Target}, nil
	case noderoot.Regular:
		backup := BackupDir + "/" + strconv.Itoa(n)
		if err := r.Link(p, backup); err != nil {
			if err := r.CopyFile(p, backup, true); err != nil {
				return prior{}, fmt.Errorf("backing up %s: %w", p, err)
			}
		}
		return prior{Path: p, Kind: priorFile, Backup: backup, Dev: info.Dev, Ino: info.Ino}, nil
	}
	return prior{}, fmt.Errorf("%s is a directory or special file; refusing to replace it", p)
}
