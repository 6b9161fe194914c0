package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mco-dev/mco/internal/ignition"
)

// Error is a render failure pinned to the MachineConfig that caused it.
type Error struct {
	// MachineConfig is the name of the offending MachineConfig; empty when the failure is
	// about the pool or the merged result as a whole.
	MachineConfig string
	// Field is the path inside the MachineConfig, e.g. "spec.config.storage.files.0.mode".
	Field  string
	Reason string
	// Line and Column are 1-based positions in spec.config as Ignition saw it; 0 when unknown.
	// Kept apart from Reason because they count in the raw config, which a caller that knows
	// the manifest file may replace with a position the admin can find.
	Line, Column int64
}

func (e *Error) Error() string {
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

// Errors is every problem found, so an admin fixes them in one go rather than one per render.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// orNil keeps a nil Errors from becoming a non-nil error interface.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// configErrors re-homes Ignition parse problems under spec.config of the named MachineConfig.
func configErrors(mc string, err error) Errors {
	var ce *ignition.ConfigError
	if !errors.As(err, &ce) {
		return Errors{{MachineConfig: mc, Field: "spec.config", Reason: err.Error()}}
	}
	out := make(Errors, 0, len(ce.Problems))
	for _, p := range ce.Problems {
		field := "spec.config"
		if p.Path != "" {
			field += "." + p.Path
		}
		out = append(out, &Error{MachineConfig: mc, Field: field, Reason: p.Reason, Line: p.Line, Column: p.Column})
	}
	return out
}
