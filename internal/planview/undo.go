package planview

import (
	"fmt"
	"io"

	"github.com/mco-dev/mco/internal/changeplan"
)

// WriteUndo writes `mco rollout undo`'s plan: where the pool goes back from and to, and why
// there, then the pool's live plan as `mco plan --pool` shows it once the undo is written.
func WriteUndo(w io.Writer, u *changeplan.Undo) error {
	source := "the completed rollout is undone: back to the previous configuration"
	if u.InProgress() {
		source = "the rollout in progress is undone: back to the config every node ran before it"
	}
	fmt.Fprintf(w, "undo of pool %s: %s → %s (%s)\n\n", u.Before.Name, u.Rollback.From, u.Rollback.To, source)
	return WriteReport(w, u.Report, nil)
}

// UndoNotWritten is the line ending a --dry-run undo: what writing it would hold.
func UndoNotWritten(u *changeplan.Undo) string {
	name := u.Before.Name
	return fmt.Sprintf("\n--dry-run: nothing written; without it, pool %s is held on %s until its MachineConfigs change or `mco rollout resume mcp/%s`\n", name, u.Rollback.To, name)
}

// UndoWritten is the line ending an undo written: what it holds and how to follow it.
func UndoWritten(u *changeplan.Undo) string {
	name := u.Before.Name
	return fmt.Sprintf("\npool %s: rolling back from %s to %s; held there until its MachineConfigs change or `mco rollout resume mcp/%s` (follow it with `mco rollout status mcp/%s`)\n",
		name, u.Rollback.From, u.Rollback.To, name, name)
}
