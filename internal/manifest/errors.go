package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is one problem in one document of one file.
type Error struct {
	File string
	// Document is the 1-based index of the document in File; 0 when the problem is with the
	// file as a whole (unreadable, not a manifest type).
	Document int
	// Field is the path inside the document, e.g. "spec.config.storage.files.0.mode"; empty
	// when the problem is with the document as a whole.
	Field string
	// Line and Column are 1-based positions in File; 0 when unknown.
	Line, Column int
	Reason       string
}

// Error formats as "file:document: field (line L col C): reason", leaving out what is unknown.
func (e *Error) Error() string {
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

// Errors is every problem found, in file and document order.
type Errors []*Error

// Error puts one problem on each line, as the commands print them.
func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// orNil keeps an empty Errors from becoming a non-nil error.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// yamlLineRE matches the position prefix the YAML libraries put in their messages
// ("yaml: line 3: mapping values are not allowed in this context").
var yamlLineRE = regexp.MustCompile(`(?:yaml: )?line (\d+): `)

// withYAMLLine moves a "line N:" the YAML library wrote into the message onto the error, made
// relative to the file by the document's first line. The library puts an unexpected end of
// the document on the line after its last, which the file may not have (or which is the next
// document's "---"), so the line is kept within the document.
func (e *Error) withYAMLLine(doc document) *Error {
	m := yamlLineRE.FindStringSubmatchIndex(e.Reason)
	if m == nil {
		return e
	}
	n, err := strconv.Atoi(e.Reason[m[2]:m[3]])
	if err != nil {
		return e
	}
	e.Line = min(doc.firstLine+n-1, doc.lastLine())
	reason := e.Reason[:m[0]] + e.Reason[m[1]:]
	// yaml.v2 lists unmarshal errors on indented lines under this heading.
	reason = strings.Replace(reason, "yaml: unmarshal errors:", "", 1)
	e.Reason = strings.Join(strings.Fields(reason), " ")
	return e
}
