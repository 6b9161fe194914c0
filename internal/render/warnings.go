package render

import (
	"fmt"
	"strings"

	"github.com/mco-dev/mco/internal/ignition"
)

// Warning is something in a MachineConfig that renders, but not as written: a key Ignition
// ignores (so it is not in the rendered config, as in OpenShift's), or one differing from a
// field's name only in case, which is read as that field. It never stops a render.
type Warning struct {
	MachineConfig string `json:"machineConfig"`
	// Field is the key's path inside the MachineConfig, e.g. "spec.config.networkd".
	Field string `json:"field"`
	// Key is the key as written; empty for the line saying how many more were left out.
	Key string `json:"key,omitempty"`
	// Line and Column are 1-based positions of the key in spec.config as Ignition saw it.
	Line   int64  `json:"line,omitempty"`
	Column int64  `json:"column,omitempty"`
	Reason string `json:"reason"`
}

// String reads like Error's: `MachineConfig "x": spec.config.networkd: unknown key ... (line 1 col 33)`.
func (w Warning) String() string {
	return (&Error{MachineConfig: w.MachineConfig, Field: w.Field, Reason: w.Reason, Line: w.Line, Column: w.Column}).Error()
}

// configWarnings re-homes Ignition's warnings under spec.config of the named MachineConfig.
func configWarnings(mc string, ws []ignition.Warning) []Warning {
	if len(ws) == 0 {
		return nil
	}
	out := make([]Warning, len(ws))
	for i, w := range ws {
		field := "spec.config"
		if w.Path != "" {
			field += "." + w.Path
		}
		out[i] = Warning{MachineConfig: mc, Field: field, Key: w.Key, Line: w.Line, Column: w.Column, Reason: w.Reason}
	}
	return out
}

// maxSummarised is how many warnings SummarizeWarnings spells out: enough to name the usual
// one or two MachineConfigs, few enough for a pool condition and an event to stay readable.
const maxSummarised = 5

// SummarizeWarnings is the one bounded text a pool's RenderWarnings condition and event carry:
// the first maxSummarised warnings (MachineConfig, field, reason, position) and how many more;
// "" when there are none. It holds no rendered config's name, so it changes only when the
// warnings do.
func SummarizeWarnings(ws []Warning) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("rendered as Ignition and OpenShift read it, which only warn:")
	for i, w := range ws {
		if i == maxSummarised {
			fmt.Fprintf(&b, "; and %d more (mco validate lists them)", len(ws)-maxSummarised)
			break
		}
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" ")
		b.WriteString(w.String())
	}
	return b.String()
}
