package ignition

import (
	"cmp"
	"fmt"
	"slices"
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

// reportProblems lists the fatal entries of an Ignition report, and, when version names the
// spec raw declares, what became of the keys it warns it does not use: Ignition only warns
// about them, so they are warnings unless two of them set one field.
func reportProblems(raw []byte, rpt report.Report, version string) ([]FieldError, []Warning) {
	var problems problemList
	type unknownKey struct {
		fe    FieldError
		parts []string // the key's path, the key last (a key may hold a dot)
	}
	var unknown []unknownKey
	for _, e := range rpt.Entries {
		fe := FieldError{Path: contextPath(e.Context.Path), Reason: e.Message}
		if e.Marker.StartP != nil {
			fe.Line, fe.Column = e.Marker.Start()
		}
		switch {
		case e.Kind == report.Warn && strings.HasPrefix(e.Message, unknownKeyWarning) && version != "" && len(e.Context.Path) > 0:
			unknown = append(unknown, unknownKey{fe, contextParts(e.Context.Path)})
		case e.Kind != nil && e.Kind.IsFatal():
			problems.add(raw, fe)
		}
	}
	// The library finds unused keys in map order: sorted, the same config always gets the
	// same warnings (and the same first maxWarnings of them).
	slices.SortStableFunc(unknown, func(a, b unknownKey) int { return byPosition(a.fe, b.fe) })
	var warnings warningList
	judge := newKeyJudge(raw, version)
	for _, k := range unknown {
		fe, parts := k.fe, k.parts
		verdict := judge.judge(parts[:len(parts)-1], parts[len(parts)-1], fe.Line, fe.Column)
		if verdict.warning != nil {
			warnings.add(*verdict.warning)
		} else {
			problems.add(raw, *verdict.problem)
		}
	}
	return problems.result(), warnings.result()
}

// byPosition orders problems by where they are in the config.
func byPosition(a, b FieldError) int {
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Path, b.Path))
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

// add keeps fe, found in raw, unless the list is full. A problem without a field path (a syntax
// or type error) is located by its position in raw, and a type mismatch is put in plain words.
func (p *problemList) add(raw []byte, fe FieldError) {
	if p.full() {
		p.more++
		return
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
	p.list = append(p.list, fe)
}

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
	return strings.Join(contextParts(parts), ".")
}

func contextParts(parts []interface{}) []string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return s
}
