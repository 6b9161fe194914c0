package manifest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/mco-dev/mco/internal/fielderr"
)

// Error is one problem in one document of one file (fielderr.Error with File set).
type Error = fielderr.Error

// Errors is every problem found, in file and document order, one per line.
type Errors = fielderr.Errors

// yamlLineRE matches the position prefix the YAML libraries put in their messages
// ("yaml: line 3: mapping values are not allowed in this context").
var yamlLineRE = regexp.MustCompile(`(?:yaml: )?line (\d+): `)

// withYAMLLine moves a "line N:" the YAML library wrote into the message onto the error, made
// relative to the file by the document's first line. The library puts an unexpected end of
// the document on the line after its last, which the file may not have (or which is the next
// document's "---"), so the line is kept within the document.
func withYAMLLine(e *Error, doc document) *Error {
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
