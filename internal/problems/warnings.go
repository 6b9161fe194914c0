package problems

import (
	"fmt"
	"io"

	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
)

// Warnings prints what Ignition only warns about in the admin's MachineConfigs (keys it
// ignores, keys it reads as a field spelled in another case): they render, so they never change
// an exit code, but the admin should know that part of a file is not in effect. Each is printed
// once: validate meets a MachineConfig in its own check and again in every render selecting it.
type Warnings struct {
	seen map[string]bool
}

// Print writes each of ws not printed before on w, placed in its file (WarningLine).
func (p *Warnings) Print(w io.Writer, set *manifest.Set, ws []render.Warning) {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	for _, warning := range ws {
		line := WarningLine(set, warning)
		if p.seen[line] {
			continue
		}
		p.seen[line] = true
		fmt.Fprintln(w, line)
	}
}

// WarningLine puts a warning at the file and document its MachineConfig came from, with the
// key's line and column in that file, as errors are: "warning: FILE:DOC: MachineConfig NAME:
// FIELD (line L col C): REASON". A MachineConfig from no file (or translated from Butane, whose
// file holds no spec.config) keeps Ignition's position inside spec.config.
func WarningLine(set *manifest.Set, w render.Warning) string {
	src, ok := set.MachineConfigSource(w.MachineConfig)
	if !ok || src.FromButane || w.MachineConfig == "" {
		return "warning: " + w.String()
	}
	e := src.FieldError(w.Field, w.Reason)
	place := e.File
	if e.Document > 0 {
		place += fmt.Sprintf(":%d", e.Document)
	}
	at := ""
	if e.Line > 0 {
		at = fmt.Sprintf(" (line %d col %d)", e.Line, e.Column)
	}
	return fmt.Sprintf("warning: %s: MachineConfig %s: %s%s: %s", place, w.MachineConfig, e.Field, at, w.Reason)
}
