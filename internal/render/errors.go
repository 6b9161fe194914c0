package render

import (
	"errors"

	"github.com/mco-dev/mco/internal/fielderr"
	"github.com/mco-dev/mco/internal/ignition"
)

// Error is a render failure pinned to the MachineConfig that caused it (fielderr.Error with
// MachineConfig set, or neither it nor a file when about the pool or the merged result). Its
// Line and Column count in spec.config as Ignition saw it.
type Error = fielderr.Error

// Errors is every problem found, so an admin fixes them in one go rather than one per render.
type Errors = fielderr.Errors

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
		out = append(out, &Error{MachineConfig: mc, Field: field, Reason: p.Reason, Line: int(p.Line), Column: int(p.Column)})
	}
	return out
}
