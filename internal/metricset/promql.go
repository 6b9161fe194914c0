package metricset

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// NamesIn parses expr with Prometheus's own PromQL parser and returns the metric names its
// selectors use, sorted. A selector without a plain name (only {__name__=~"..."}) is an error:
// what it matches cannot be checked.
func NamesIn(expr string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var bad error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		if name == "" {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
		}
		if name == "" {
			bad = fmt.Errorf("selector %s names no metric", vs)
			return nil
		}
		seen[name] = true
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Unknown returns the names expr uses that are neither registered by the code (known, with a
// histogram's _bucket/_sum/_count) nor in also (recording rules' outputs, Prometheus's own up).
func Unknown(expr string, known map[string]Metric, also map[string]bool) ([]string, error) {
	names, err := NamesIn(expr)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, n := range names {
		if _, ok := Series(known, n); !ok && !also[n] {
			unknown = append(unknown, n)
		}
	}
	return unknown, nil
}

// LabelProblems returns the labels expr selects on, groups by or matches on that none of the
// metrics involved can carry: not registered on the metric and not added at scrape time
// (scrapeLabels, by exporter). Selectors of names Registered does not know (recording rules'
// outputs) are not checked, nor are aggregations over them.
func LabelProblems(expr string, known map[string]Metric, scrapeLabels map[string][]string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	allowed := func(vs *parser.VectorSelector) (map[string]bool, bool) {
		m, ok := Series(known, vs.Name)
		if !ok {
			return nil, false
		}
		set := map[string]bool{labels.MetricName: true}
		for _, l := range append(append([]string{}, m.Labels...), scrapeLabels[m.Exporter]...) {
			set[l] = true
		}
		if m.Type == "histogram" && strings.HasSuffix(vs.Name, "_bucket") {
			set["le"] = true
		}
		return set, true
	}
	// under is every label some known metric below n can carry; ok is false when n reads no
	// known metric.
	under := func(n parser.Node) (map[string]bool, bool) {
		set, any := map[string]bool{}, false
		parser.Inspect(n, func(c parser.Node, _ []parser.Node) error {
			if vs, ok := c.(*parser.VectorSelector); ok {
				if a, ok := allowed(vs); ok {
					any = true
					for l := range a {
						set[l] = true
					}
				}
			}
			return nil
		})
		return set, any
	}
	var problems []string
	check := func(what string, ls []string, set map[string]bool) {
		for _, l := range ls {
			if !set[l] {
				problems = append(problems, fmt.Sprintf("%s: no metric there has label %q", what, l))
			}
		}
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if set, ok := allowed(n); ok {
				var ls []string
				for _, m := range n.LabelMatchers {
					ls = append(ls, m.Name)
				}
				check(n.String(), ls, set)
			}
		case *parser.AggregateExpr:
			if set, ok := under(n.Expr); ok && !n.Without {
				check(n.Op.String()+" by ("+strings.Join(n.Grouping, ", ")+")", n.Grouping, set)
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil && n.VectorMatching.On && len(n.VectorMatching.MatchingLabels) > 0 {
				lset, lok := under(n.LHS)
				rset, rok := under(n.RHS)
				if lok {
					check("on ("+strings.Join(n.VectorMatching.MatchingLabels, ", ")+") left", n.VectorMatching.MatchingLabels, lset)
				}
				if rok {
					check("on ("+strings.Join(n.VectorMatching.MatchingLabels, ", ")+") right", n.VectorMatching.MatchingLabels, rset)
				}
			}
		}
		return nil
	})
	return problems, nil
}

// OutputLabels returns the labels expr's result series carry, for the shapes rules use:
// selectors, aggregations by (...), and those combined one-to-one, compared with a number or
// filtered with and/unless. ok is false for other shapes.
func OutputLabels(expr string, known map[string]Metric, scrapeLabels map[string][]string) ([]string, bool, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, false, err
	}
	out, ok := outputLabels(e, known, scrapeLabels)
	return out, ok, nil
}

func outputLabels(e parser.Expr, known map[string]Metric, scrapeLabels map[string][]string) ([]string, bool) {
	switch n := e.(type) {
	case *parser.ParenExpr:
		return outputLabels(n.Expr, known, scrapeLabels)
	case *parser.AggregateExpr:
		return n.Grouping, !n.Without
	case *parser.VectorSelector:
		m, found := Series(known, n.Name)
		if !found {
			return nil, false
		}
		return append(append([]string{}, m.Labels...), scrapeLabels[m.Exporter]...), true
	case *parser.BinaryExpr:
		lhs, ok := outputLabels(n.LHS, known, scrapeLabels)
		if _, scalar := n.RHS.(*parser.NumberLiteral); scalar || !ok {
			return lhs, ok
		}
		vm := n.VectorMatching
		switch {
		case n.Op == parser.LAND || n.Op == parser.LUNLESS:
			return lhs, true
		case vm == nil || vm.Card != parser.CardOneToOne || n.Op == parser.LOR:
			return nil, false
		case vm.On:
			return vm.MatchingLabels, true
		}
		var out []string
		for _, l := range lhs {
			if !slices.Contains(vm.MatchingLabels, l) {
				out = append(out, l)
			}
		}
		return out, true
	}
	return nil, false
}
