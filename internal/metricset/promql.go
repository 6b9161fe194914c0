package metricset

import (
	"fmt"
	"sort"

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
