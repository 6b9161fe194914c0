// Package apply moves a node root from one config's set of files to another's as one
// transaction that survives crashes.
//
// Begin computes every mutation up front (file writes, symlinks, removals, ownership records,
// core's password), refuses a path whose parent is not a directory (a file, a dangling symlink,
// one leading out of the root), records the prior state of each touched path in a journal
// (hard-linked or copied backups, symlink targets, directories about to be created, the unit
// enablement symlinks) and syncs it. Apply journals the directories again if the disk changed
// since, so every directory it creates is journaled first, then mutates; Commit syncs and
// atomically writes the currentconfig record, which is the commit point, and drops the
// journal. Rollback, or Recover after a crash, restores every touched path from the journal,
// so the root is exactly in the old or the new config, never in between.
//
// A rollback undoes only what its transaction did. What it finds that the transaction cannot
// have left (a directory or special file where it wrote a file, a symlink or file where it
// made a directory, a directory with foreign content, a path whose parent no longer resolves)
// stays as it is rather than failing the rollback and leaving the journal in every later
// update's way. A file that was never replaced (its inode is still there, e.g. immutable) is
// left alone; a replaced one gets its backup linked back, which needs no free block.
//
// Files under <root>/etc/machine-config-daemon:
//
//	currentconfig                  the MachineConfig (JSON) the root is committed to
//	journal, journal.d/            the transaction in progress and its backups
//	orig/<path>.mcdorig            a file as it was before a MachineConfig first replaced it
//	noorig/<path>.mcdnoorig        stamp: the path did not exist before a MachineConfig wrote it
//	orig/core-password.mcdorig     core's password hash before a MachineConfig first set it
package apply

// Paths inside the node root.
const (
	StateDir          = "/etc/machine-config-daemon"
	CurrentConfigPath = StateDir + "/currentconfig"
	JournalPath       = StateDir + "/journal"
	BackupDir         = StateDir + "/journal.d"
	OrigDir           = StateDir + "/orig"
	NoOrigDir         = StateDir + "/noorig"
	CorePasswordOrig  = OrigDir + "/core-password.mcdorig"
	ShadowPath        = "/etc/shadow"
)

func origPath(p string) string   { return OrigDir + p + ".mcdorig" }
func noOrigPath(p string) string { return NoOrigDir + p + ".mcdnoorig" }
