package apply

import (
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// Journaled describes the transaction whose journal is still on disk, for a report of why
// updates are blocked; ok is false when there is none.
func (a *Applier) Journaled() (from, to string, ok bool, err error) {
	j, err := readJournal(a.Root)
	if err != nil || j == nil {
		return "", "", false, err
	}
	return j.From, j.To, true, nil
}

// Abandon gives up the journaled transaction without rolling it back, for when an admin
// accepts the root as it is (in neither config) and has a config rewritten in full. The
// journal and its backups are first kept in saveDir (in the root) for inspection; only then is
// the journal dropped, so a crash in between leaves it to abandon again. An OS staging the
// transaction started is not discarded: the full rewrite stages what its config needs.
// ok is false when nothing was journaled; from and to are empty when the journal is unreadable,
// which is abandoned all the same.
func (a *Applier) Abandon(saveDir string) (from, to string, ok bool, err error) {
	r := a.Root
	info, err := r.Lstat(JournalPath)
	if err != nil || info.Type == noderoot.Missing {
		return "", "", false, err
	}
	from, to, _, _ = a.Journaled()
	// The raw bytes, not the parsed journal: an unreadable journal is kept as it is.
	data, err := r.ReadFile(JournalPath)
	if err != nil {
		return from, to, true, err
	}
	if _, err := r.MkdirAll(saveDir+"/journal.d", noderoot.DirSpec{Perm: 0o700}); err != nil {
		return from, to, true, err
	}
	entries, err := r.ReadDir(BackupDir)
	if err != nil {
		return from, to, true, err
	}
	for _, e := range entries {
		src, dst := BackupDir+"/"+e.Name(), saveDir+"/journal.d/"+e.Name()
		if err := r.Link(src, dst); err != nil {
			if err := r.CopyFile(src, dst, true); err != nil {
				return from, to, true, fmt.Errorf("keeping backup %s: %w", src, err)
			}
		}
	}
	if err := r.WriteFile(saveDir+"/journal", data, noderoot.WriteOptions{Perm: 0o600, Deferred: true}); err != nil {
		return from, to, true, err
	}
	if err := r.SyncDirs([]string{saveDir + "/journal", saveDir + "/journal.d/x"}); err != nil {
		return from, to, true, err
	}
	return from, to, true, a.finish()
}
