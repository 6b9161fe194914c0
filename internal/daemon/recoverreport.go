package daemon

import (
	"fmt"
	"path/filepath"

	"github.com/mco-dev/mco/internal/daemon/apply"
)

// RecoveryReport says what RecoverRoot did to the node root at root, for `mco daemon recover`.
func RecoveryReport(rec apply.Recovery, root string) string {
	switch rec.Outcome {
	case apply.RolledBack:
		return fmt.Sprintf("rolled back the update from %q to %q: the node root %s is in %q again", rec.From, rec.To, root, rec.From)
	case apply.Completed:
		return fmt.Sprintf("the update from %q to %q had committed; dropped its journal: the node root %s is in %q", rec.From, rec.To, root, rec.To)
	}
	return fmt.Sprintf("nothing to recover: no update is journaled in %s", root)
}

// AbandonReport says what AbandonJournal did (ab nil: nothing) to the node root at root, for
// `mco daemon recover --abandon`.
func AbandonReport(ab *Abandoned, root string) string {
	if ab == nil {
		return fmt.Sprintf("nothing to abandon: no update is journaled in %s", root)
	}
	return fmt.Sprintf("abandoned the update from %q to %q without rolling it back; its journal and backups are in %s\n"+
		"created %s: the agent rewrites the desired config in full and reboots at its next retry",
		ab.From, ab.To, filepath.Join(root, ab.SavedTo), filepath.Join(root, ForceFilePath))
}
