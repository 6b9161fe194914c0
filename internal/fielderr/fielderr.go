// Package fielderr is the one shape of a problem at a field of a MachineConfig or pool, shared
// by the manifest loader (internal/manifest), which knows the file and document an object came
// from, and the render core (internal/render), which knows only the MachineConfig's name. A
// render problem an admin's file holds is moved to that file by filling in File and Document,
// without changing its type.
package fielderr

import (
	"fmt"
	"strings"
)

// Error is one problem, located in a file (File and Document) or, with no file known, at a
// named MachineConfig (or, with neither, at the pool or the merged result as a whole).
type Error struct {
	File string
	// Document is the 1-based index of the document in File; 0 when the problem is with the
	// file as a whole (unreadable, not a manifest type).
	Document int
	// MachineConfig is the name of the offending MachineConfig when no file is known; empty
	// when the problem is about a pool or the merged result as a whole.
	MachineConfig string
	// Field is the path inside the object, e.g. "spec.config.storage.files.0.mode"; empty
	// when the problem is with the document or object as a whole.
	Field string
	// Line and Column are 1-based positions, in File when there is one, else in spec.config as
	// Ignition saw it; 0 when unknown. Kept apart from Reason so a caller that knows the file
	// may replace a position in spec.config with one the admin can find.
	Line, Column int
	Reason       string
}

// InFile reports whether the problem is located in a manifest file.
func (e *Error) InFile() bool { return e.File != "" || e.Document > 0 }

// Error leads with where the admin looks: "file:document: field (line L col C): reason" for a
// problem in a file, `MachineConfig "name": field: reason (line L col C)` otherwise; what is
// unknown is left out.
func (e *Error) Error() string {
	if e.InFile() {
		return e.inFile()
	}
	return e.atObject()
}

func (e *Error) inFile() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Document > 0 {
		fmt.Fprintf(&b, ":%d", e.Document)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
	}
	if e.Line > 0 {
		if e.Field != "" {
			b.WriteString(" ")
		}
		if e.Column > 0 {
			fmt.Fprintf(&b, "(line %d col %d)", e.Line, e.Column)
		} else {
			fmt.Fprintf(&b, "(line %d)", e.Line)
		}
	}
	if e.Field != "" || e.Line > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

func (e *Error) atObject() string {
	var b strings.Builder
	if e.MachineConfig != "" {
		fmt.Fprintf(&b, "MachineConfig %q: ", e.MachineConfig)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d col %d)", e.Line, e.Column)
	}
	return b.String()
}

// Errors is every problem found, so an admin fixes them in one go rather than one per run.
type Errors []*Error

// Error puts problems in files one on each line, as the commands print them, and problems at
// objects on one line, as a pool's condition holds them.
func (es Errors) Error() string {
	sep := "\n"
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
		if !e.InFile() {
			sep = "; "
		}
	}
	return strings.Join(msgs, sep)
}

// OrNil keeps an empty Errors from becoming a non-nil error.
func (es Errors) OrNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
