package ignition

import (
	"fmt"
	"strings"

	"github.com/coreos/vcontext/report"
)

// FieldError is one problem in a config, located as precisely as the libraries allow.
type FieldError struct {
	// Path is the field path inside the Ignition config, e.g. "storage.files.0.mode"; empty
	// when the problem is with the document as a whole.
	Path string
	// Line and Column are 1-based positions in the raw config; 0 when unknown.
	Line, Column int64
	Reason       string
}

func (e FieldError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
	}
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(line %d col %d)", e.Line, e.Column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// ConfigError holds every fatal problem found in one config.
type ConfigError struct {
	Problems []FieldError
}

func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}

// fromReport turns the fatal entries of an Ignition validation report into a ConfigError, or
// falls back to err when the report names nothing.
func fromReport(rpt report.Report, err error) error {
	var problems []FieldError
	for _, e := range rpt.Entries {
		if e.Kind == nil || !e.Kind.IsFatal() {
			continue
		}
		fe := FieldError{Path: contextPath(e.Context.Path), Reason: e.Message}
		if e.Marker.StartP != nil {
			fe.Line, fe.Column = e.Marker.Start()
		}
		problems = append(problems, fe)
	}
	if len(problems) == 0 {
		if err == nil {
			return nil
		}
		return &ConfigError{Problems: []FieldError{{Reason: err.Error()}}}
	}
	return &ConfigError{Problems: problems}
}

func contextPath(parts []interface{}) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ".")
}
