package etcdindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// RefersToIndex reports whether content is an etcd_index template: whether one of its actions
// names etcd_index as a field, as {{.etcd_index}}, {{ $.etcd_index }} and
// {{if eq .etcd_index 0}} do. Only such content is executed; everything else (Go templates
// meant for the program that reads the file, Helm or Jinja braces, a stray "{{") is served and
// written byte for byte, as OpenShift serves it, and never parsed.
//
// Actions are delimited as text/template's lexer delimits them, so a valid template is never
// missed: an action runs from "{{" to the first "}}" outside a quoted, raw or character
// string, or to the end of content when it is not closed (executing then reports the unclosed
// action). A comment ({{/* ... */}}) refers to nothing: text/template drops it.
func RefersToIndex(content string) bool {
	rest := content
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			return false
		}
		var refers bool
		refers, rest = scanAction(rest[open+2:])
		if refers {
			return true
		}
	}
}

// indexField is how an action names the index: a field of dot or of $.
const indexField = "." + Variable

// scanAction reads one action, s starting just after its "{{", and returns whether it names
// the index and what follows its "}}".
func scanAction(s string) (refers bool, rest string) {
	i := 0
	if len(s) >= 2 && s[0] == '-' && isTemplateSpace(s[1]) {
		i = 2 // a left trim marker, "{{- "
	}
	if strings.HasPrefix(s[i:], "/*") {
		end := strings.Index(s[i+2:], "*/")
		if end < 0 {
			return false, ""
		}
		i += 2 + end + 2
	}
	for i < len(s) {
		switch c := s[i]; {
		case c == '}' && strings.HasPrefix(s[i:], "}}"):
			return false, s[i+2:]
		case c == '"' || c == '\'':
			i = skipQuoted(s, i)
		case c == '`':
			end := strings.IndexByte(s[i+1:], '`')
			if end < 0 {
				return false, ""
			}
			i += 1 + end + 1
		case c == '.' && strings.HasPrefix(s[i:], indexField) && !continuesIdentifier(s[i+len(indexField):]):
			return true, ""
		default:
			i++
		}
	}
	return false, ""
}

// skipQuoted returns the index just past the quoted or character string opening at s[i]. Like
// text/template's lexer it honours backslash escapes and ends an unterminated one at the line's
// end.
func skipQuoted(s string, i int) int {
	quote := s[i]
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return i
		case quote:
			return i + 1
		}
	}
	return len(s)
}

// continuesIdentifier is true when s starts with a rune that would make the identifier before
// it longer (.etcd_indexes is not .etcd_index).
func continuesIdentifier(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size > 0 && (r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
}

// isTemplateSpace is what text/template accepts after a trim marker.
func isTemplateSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}
