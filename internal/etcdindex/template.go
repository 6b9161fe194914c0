package etcdindex

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// allowedFuncs are the functions a template may call: comparisons, logic and print, whose cost
// and output are bounded by their arguments.
var allowedFuncs = map[string]bool{
	"and": true, "or": true, "not": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"print": true,
}

// executeText executes text as a template named name with data. It reports changed=false, and
// never parses, when text does not refer to the index: such content must come back byte for
// byte.
func executeText(name, text string, data map[string]any) (string, bool, error) {
	if !strings.Contains(text, Variable) || !RefersToIndex(text) {
		return text, false, nil
	}
	out, err := execute(name, []byte(text), data)
	if err != nil {
		return "", false, err
	}
	return string(out), string(out) != text, nil
}

func execute(name string, text []byte, data map[string]any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, err
	}
	if err := checkSubset(t); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// checkSubset refuses what could make executing cost more than linear time or output: loops,
// template definitions and calls, and functions outside allowedFuncs. It also refuses, in every
// branch, fields that cannot exist: anything but .etcd_index (and $.etcd_index), fields of the
// index, fields of dot inside with. Execution would report them too (missingkey=error), but
// only in the branch the index takes, so a check with one index would let another fail.
func checkSubset(t *template.Template) error {
	for _, defined := range t.Templates() {
		if defined.Name() != t.Name() {
			return fmt.Errorf("template: define and block are not allowed (defines %q)", defined.Name())
		}
	}
	c := checker{tree: t.Tree}
	return c.node(t.Root)
}

// checker walks one parsed template; tree locates refused actions by line and column.
// dotIsValue is set inside with, where dot is the value with tested (the index, a number or a
// string), which has no fields.
type checker struct {
	tree       *parse.Tree
	dotIsValue bool
}

func (c checker) node(node parse.Node) error {
	switch n := node.(type) {
	case nil, *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, child := range n.Nodes {
			if err := c.node(child); err != nil {
				return err
			}
		}
		return nil
	case *parse.ActionNode:
		return c.pipe(n.Pipe)
	case *parse.IfNode:
		return c.branch(&n.BranchNode)
	case *parse.WithNode:
		if err := c.pipe(n.Pipe); err != nil {
			return err
		}
		inside := c
		inside.dotIsValue = !keepsData(n.Pipe, c.dotIsValue)
		if err := inside.node(n.List); err != nil {
			return err
		}
		return c.node(n.ElseList)
	case *parse.RangeNode:
		return c.refused(n, "range is not allowed: "+truncate(n.String(), 60))
	case *parse.TemplateNode:
		return c.refused(n, "template is not allowed: "+truncate(n.String(), 60))
	default:
		return c.refused(node, "this action is not allowed: "+truncate(node.String(), 60))
	}
}

func (c checker) branch(b *parse.BranchNode) error {
	if err := c.pipe(b.Pipe); err != nil {
		return err
	}
	if err := c.node(b.List); err != nil {
		return err
	}
	return c.node(b.ElseList)
}

func (c checker) pipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			if err := c.arg(arg); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c checker) arg(arg parse.Node) error {
	switch a := arg.(type) {
	case *parse.FieldNode:
		if c.dotIsValue {
			return c.refused(a, fmt.Sprintf("%s is a field of dot inside with, where dot is the value with tested, which has no fields (the index is $.%s there)", a, Variable))
		}
		return c.dataField(a, a.Ident)
	case *parse.VariableNode:
		if a.Ident[0] == "$" && len(a.Ident) > 1 {
			return c.dataField(a, a.Ident[1:])
		}
		return nil
	case *parse.DotNode, *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return nil
	case *parse.ChainNode:
		return c.arg(a.Node)
	case *parse.PipeNode:
		return c.pipe(a)
	case *parse.IdentifierNode:
		if !allowedFuncs[a.Ident] {
			return c.refused(a, fmt.Sprintf("function %s is not allowed (allowed: and, or, not, eq, ne, lt, le, gt, ge, print)", a.Ident))
		}
		return nil
	default:
		return c.refused(arg, "this argument is not allowed: "+truncate(arg.String(), 60))
	}
}

// keepsData is true for a with whose pipe is the data itself ({{with .}} where dot is the data,
// {{with $}}), the one case where dot stays the data inside it.
func keepsData(p *parse.PipeNode, dotIsValue bool) bool {
	if len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.DotNode:
		return !dotIsValue
	case *parse.VariableNode:
		return len(a.Ident) == 1 && a.Ident[0] == "$"
	}
	return false
}

// dataField checks a field path of the template's data (idents after "." or "$."): the data
// holds etcd_index alone, and the index is a number.
func (c checker) dataField(n parse.Node, idents []string) error {
	if idents[0] != Variable {
		return c.refused(n, fmt.Sprintf("%s is not %s, the only variable: a content that refers to %s is executed as a template whole, so write its other braces as {{\"{{\"}}", n, Variable, Variable))
	}
	if len(idents) > 1 {
		return c.refused(n, fmt.Sprintf("%s: %s is a number, it has no field %s", n, Variable, idents[1]))
	}
	return nil
}

// refused locates the offending node the way text/template locates its own errors: by name,
// line and column.
func (c checker) refused(n parse.Node, reason string) error {
	location, _ := c.tree.ErrorContext(n)
	return fmt.Errorf("template: %s: %s", location, reason)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
