package etcdindex

import (
	"fmt"
	"slices"
	"testing"
	"text/template/parse"
)

// TestRefersToIndex: only content with an action naming .etcd_index (or $.etcd_index) is an
// etcd_index template; everything else is left byte for byte.
func TestRefersToIndex(t *testing.T) {
	tests := []struct {
		content string
		want    bool
	}{
		{"{{.etcd_index}}", true},
		{"ETCD_NAME=etcd-{{ .etcd_index }}\n", true},
		{"{{ $.etcd_index }}", true},
		{"{{if eq .etcd_index 0}}new{{else}}existing{{end}}", true},
		{"{{- .etcd_index -}}", true},
		{"{{$i := .etcd_index}}{{$i}}", true},
		{"{{with .etcd_index}}{{.}}{{end}}", true},
		{"{{ .etcd_index }}\u00e9", true},
		{"a {{.Other}} b {{.etcd_index}}", true}, // any one action is enough
		{"{{\"{{\"}}.Id}} {{.etcd_index}}", true},
		// "}}" ends an action only outside strings, as text/template's lexer reads it.
		{"{{print \"}}\" .etcd_index}}", true},
		{"{{print `}}\n` .etcd_index}}", true},
		{"{{print '}' .etcd_index}}", true},
		{"{{print \"\\\"}}\" .etcd_index}}", true},
		{"{{\"a\n.etcd_index}}", true}, // an unterminated string ends at the line's end
		// Invalid templates that name the index: executing them reports what is wrong.
		{"{{.etcd_index", true},
		{"{{/* c */ .etcd_index}}", true},
		{"{{.etcd_index}}{{.DNSUpstreams}}", true},
		{"{{.etcd_index.x}}", true},
		{"{{ .Values.etcd_index }}", true},

		{"", false},
		{"plain text", false},
		{"etcd_index .etcd_index $.etcd_index", false}, // outside actions
		{"}} .etcd_index {{", false},
		{"{ {.etcd_index} }", false},
		{"{{range $upstream := .DNSUpstreams}}", false}, // OpenShift's on-prem Corefile.tmpl
		{"{{ h.name }}{% if etcd_index %}", false},      // Jinja
		{"{{ .Values.image | quote }}", false},          // Helm
		{"{{.etcd_indexes}}", false},
		{"{{.etcd_index2}}", false},
		{"{{.etcd_indexé}}", false},
		{"{{.Etcd_index}}", false}, // names are case-sensitive
		{"{{.etcd_idx}}", false},   // a typo is just another program's variable
		{"{{etcd_index}}", false},  // a function, not the variable
		{"{{\"etcd_index\"}} {{\".etcd_index\"}}", false},
		{"{{`.etcd_index`}}", false},
		{"{{'.'}}etcd_index", false},
		{"{{/* .etcd_index */}}", false}, // comments refer to nothing
		{"{{- /* .etcd_index */ -}}", false},
		{"{{/* unclosed .etcd_index", false},
		{"{{\"unclosed .etcd_index", false},
		{"{{`unclosed .etcd_index", false},
	}
	for _, tc := range tests {
		t.Run(tc.content, func(t *testing.T) {
			if got := RefersToIndex(tc.content); got != tc.want {
				t.Errorf("RefersToIndex(%q) = %v, want %v", tc.content, got, tc.want)
			}
		})
	}
}

// TestRefersToIndexAgreesWithTheParser: for valid templates, the actions RefersToIndex sees are
// those text/template parses, so a template that names the index is never missed and one that
// does not is never claimed.
func TestRefersToIndexAgreesWithTheParser(t *testing.T) {
	for _, content := range []string{
		"{{.etcd_index}}",
		"x {{- /* }} .etcd_index */ -}} y",
		"{{print \"}} .etcd_index\"}}",
		"{{print `}}` .etcd_index}}",
		"{{print '}' \"{{\"}} .etcd_index {{print \"\\\"}}\"}}",
		"{{if .etcd_index}}{{\"{{\"}}.x}}{{end}}",
		"{{$.etcd_index}}",
		"{{ 3 }} .etcd_index",
		"{{ -3 }}{{.etcd_index}}",
		"{{with $x := 1}}{{$x}}{{end}}",
		"{{(.a).etcd_index}}",
		"{{range $u := .DNSUpstreams}}{{$u}}{{end}}",
		"{{.etcd_indexes}} {{.etcd_index_}}",
	} {
		trees, err := parse.Parse("t", content, "", "", map[string]any{"print": fmt.Sprint})
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		want := treeNamesIndex(trees["t"].Root)
		if got := RefersToIndex(content); got != want {
			t.Errorf("RefersToIndex(%q) = %v; its parse tree says %v", content, got, want)
		}
	}
}

// FuzzRefersToIndex: whatever text/template parses, RefersToIndex agrees with its parse trees on
// whether some action names the index.
func FuzzRefersToIndex(f *testing.F) {
	for _, seed := range []string{
		"{{.etcd_index}}", "{{print \"}}\" .etcd_index}}", "{{/* .etcd_index */}}", "{{`}}`}}.etcd_index",
		"{{define \"x\"}}{{.etcd_index}}{{end}}", "{{- $.etcd_index -}}", "{{'}'}} {{.etcd_indexes}}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		trees, err := parse.Parse("t", content, "", "", map[string]any{"print": fmt.Sprint})
		if err != nil {
			return
		}
		want := false
		for _, tree := range trees {
			want = want || treeNamesIndex(tree.Root)
		}
		if got := RefersToIndex(content); got != want {
			t.Errorf("RefersToIndex(%q) = %v; its parse trees say %v", content, got, want)
		}
	})
}

// treeNamesIndex: some field of node's tree is etcd_index.
func treeNamesIndex(node parse.Node) bool {
	switch n := node.(type) {
	case *parse.ListNode:
		return n != nil && slices.ContainsFunc(n.Nodes, treeNamesIndex)
	case *parse.ActionNode:
		return treeNamesIndex(n.Pipe)
	case *parse.IfNode:
		return treeNamesIndex(n.Pipe) || treeNamesIndex(n.List) || treeNamesIndex(n.ElseList)
	case *parse.WithNode:
		return treeNamesIndex(n.Pipe) || treeNamesIndex(n.List) || treeNamesIndex(n.ElseList)
	case *parse.RangeNode:
		return treeNamesIndex(n.Pipe) || treeNamesIndex(n.List) || treeNamesIndex(n.ElseList)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, cmd := range n.Cmds {
			if slices.ContainsFunc(cmd.Args, treeNamesIndex) {
				return true
			}
		}
		return false
	case *parse.FieldNode:
		return slices.Contains(n.Ident, Variable)
	case *parse.VariableNode:
		return slices.Contains(n.Ident[1:], Variable)
	case *parse.ChainNode:
		return treeNamesIndex(n.Node) || slices.Contains(n.Field, Variable)
	}
	return false
}
