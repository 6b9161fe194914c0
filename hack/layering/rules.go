// Command layering checks the import graph of the module against the layering rules
// docs/architecture.md states, and fails naming every import that breaks one. make vet runs it.
package main

import (
	"fmt"
	"sort"
	"strings"
)

// A Rule forbids the packages it covers to depend on the packages it names, directly or
// through any package of the module between them.
type Rule struct {
	Name string
	// Covers and Forbidden are package paths relative to the module; a path covers itself
	// and everything below it.
	Covers, Forbidden []string
	// Except are packages Covers names that the rule leaves alone, each with its reason in
	// the rules table.
	Except []string
}

// Rules are the layering docs/architecture.md states.
var Rules = []Rule{
	{
		Name:      "the agent never depends on a controller, the server or the KubeletConfig generator",
		Covers:    []string{"internal/daemon"},
		Forbidden: []string{"internal/controller", "internal/server", "internal/kubeletconfig"},
	},
	{
		Name:      "production code never depends on the dev harness",
		Covers:    []string{"internal", "api", "config"},
		Forbidden: []string{"internal/dev"},
		// diagnose is a command's, and reads a dev cluster's machines when pointed at one
		// (docs/diagnose.md); testenv starts the control planes tests run against.
		Except: []string{"internal/diagnose", "internal/testenv"},
	},
	{
		Name:      "controllers, the agent and the server never depend on a command's views",
		Covers:    []string{"internal/controller", "internal/daemon", "internal/server", "internal/changeplan", "internal/operatorstatus"},
		Forbidden: []string{"internal/statusview", "internal/explain", "internal/diagnose", "internal/planview", "internal/rolloutcli", "internal/problems"},
	},
}

// Graph is the module's packages and their imports within the module, by relative path.
type Graph map[string][]string

// Violation is one package that depends on a forbidden one, with the chain of imports that
// leads there.
type Violation struct {
	Rule  string
	Chain []string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s", v.Rule, strings.Join(v.Chain, " -> "))
}

// Check returns every covered package's first path to a forbidden one, per rule.
func Check(g Graph, rules []Rule) []Violation {
	var out []Violation
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, r := range rules {
		for _, p := range pkgs {
			if !under(p, r.Covers) || contains(r.Except, p) || under(p, r.Forbidden) {
				continue
			}
			if chain := pathTo(g, p, func(q string) bool { return under(q, r.Forbidden) }); chain != nil {
				out = append(out, Violation{Rule: r.Name, Chain: chain})
			}
		}
	}
	return out
}

// pathTo is the shortest chain of imports from p to a package hit accepts, or nil.
func pathTo(g Graph, p string, hit func(string) bool) []string {
	prev := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		imports := append([]string(nil), g[cur]...)
		sort.Strings(imports)
		for _, next := range imports {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = cur
			if hit(next) {
				var chain []string
				for at := next; at != ""; at = prev[at] {
					chain = append([]string{at}, chain...)
				}
				return chain
			}
			queue = append(queue, next)
		}
	}
	return nil
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

func contains(list []string, p string) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}
