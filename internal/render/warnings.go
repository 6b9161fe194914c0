package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

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
	return (&Error{MachineConfig: w.MachineConfig, Field: w.Field, Reason: w.Reason, Line: int(w.Line), Column: int(w.Column)}).Error()
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

// maxSummary bounds SummarizeWarnings' text, and maxSummarisedWarning each warning in it: the
// text is a pool condition's message and an event's (whose note the API server caps at 1024
// bytes), and a key can be as long as its config.
const (
	maxSummary           = 1024
	maxSummarisedWarning = 300
	summaryHeader        = "rendered as Ignition and OpenShift read it, which only warn:"
	roomForMore          = 48 // "; and 12345 more (mco validate lists them)"
)

// SummarizeWarnings is the one bounded text a pool's RenderWarnings condition and event carry:
// the first warnings (MachineConfig, field, reason, position) that fit in maxSummary bytes and
// how many more; "" when there are none. It holds no rendered config's name, so it changes only
// when the warnings do.
func SummarizeWarnings(ws []Warning) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(summaryHeader)
	for i, w := range ws {
		entry := " " + truncate(w.String(), maxSummarisedWarning)
		if i > 0 {
			entry = ";" + entry
		}
		if i > 0 && b.Len()+len(entry) > maxSummary-roomForMore {
			fmt.Fprintf(&b, "; and %d more (mco validate lists them)", len(ws)-i)
			break
		}
		b.WriteString(entry)
	}
	return b.String()
}

// truncate cuts s to at most n bytes, at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
