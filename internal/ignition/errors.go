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

// reportProblems lists the fatal entries of an Ignition report, and the keys it warns it
// does not know (version names the spec for them). An entry without a field path (a syntax or
// type error) is located by its position in raw, and a type mismatch is put in plain words.
func reportProblems(raw []byte, rpt report.Report, version string) []FieldError {
	var problems problemList
	for _, e := range rpt.Entries {
		fe := FieldError{Path: contextPath(e.Context.Path), Reason: e.Message}
		if e.Marker.StartP != nil {
			fe.Line, fe.Column = e.Marker.Start()
		}
		switch {
		case e.Kind != nil && e.Kind.IsFatal():
		case e.Kind == report.Warn && strings.HasPrefix(e.Message, unknownKeyWarning):
			fe.Reason = unknownKeyReason(strings.TrimPrefix(e.Message, unknownKeyWarning), version)
		default:
			continue
		}
		if problems.full() {
			problems.more++
			continue
		}
		reason, mismatch := typeReason(fe.Reason)
		switch {
		case fe.Path != "" || fe.Line == 0:
		case mismatch:
			fe.Path = pathOfMismatch(raw, offsetOf(raw, fe.Line, fe.Column))
		default:
			fe.Path = pathAt(raw, offsetOf(raw, fe.Line, fe.Column))
		}
		if mismatch {
			fe.Reason = reason
		}
		problems.list = append(problems.list, fe)
	}
	return problems.result()
}

// maxProblems bounds the problems reported for one config: a config with thousands of
// mistakes still gets a report that reads (and fits in a pool's status), and locating each
// problem by position walks the config once.
const maxProblems = 20

// problemList keeps the first maxProblems problems and counts the rest.
type problemList struct {
	list []FieldError
	more int
}

func (p *problemList) full() bool { return len(p.list) >= maxProblems }

func (p *problemList) result() []FieldError {
	if p.more == 0 {
		return p.list
	}
	return append(p.list, FieldError{Reason: fmt.Sprintf("and %d more problems", p.more)})
}

// unknownKeyWarning starts the spec 3 libraries' warning about a key no field takes.
const unknownKeyWarning = "unused key "

// failed is the error for problems, or err alone when no problem was located.
func failed(problems []FieldError, err error) error {
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
