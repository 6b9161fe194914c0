// Package grafana tests the dashboards in this directory: every panel's query parses with
// Prometheus's own PromQL parser and names only metrics mco's code registers
// (internal/metricset), and the overview shows what an admin watches a rollout by.
package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/metricset"
)

type panel struct {
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a row's panels, when collapsed
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func dashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	files, err := filepath.Glob("*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in config/grafana: %v", err)
	}
	out := map[string]dashboard{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = d
	}
	return out
}

// queries returns each panel's expressions by panel title, rows' nested panels included.
func queries(ps []panel) map[string][]string {
	out := map[string][]string{}
	for _, p := range ps {
		for title, exprs := range queries(p.Panels) {
			out[title] = append(out[title], exprs...)
		}
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	return out
}

// Grafana's interval variables are durations only once Grafana fills them in.
var intervalVariables = strings.NewReplacer("$__rate_interval", "5m", "${__rate_interval}", "5m", "$__interval", "1m", "${__interval}", "1m", "$__range", "6h", "${__range}", "6h")

func registered(t *testing.T) map[string]metricset.Metric {
	t.Helper()
	ms, err := metricset.Registered()
	if err != nil {
		t.Fatal(err)
	}
	return metricset.ByName(ms)
}

// Every query of every panel parses and names only registered metrics; every panel but rows
// has a query.
func TestPanelsQueryRegisteredMetrics(t *testing.T) {
	known := registered(t)
	for file, d := range dashboards(t) {
		for _, p := range d.Panels {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", file, p.Title)
			}
		}
		for title, exprs := range queries(d.Panels) {
			for _, expr := range exprs {
				if problem := check(expr, known); problem != "" {
					t.Errorf("%s: panel %q: %s", file, title, problem)
				}
			}
		}
	}
}

func check(expr string, known map[string]metricset.Metric) string {
	unknown, err := metricset.Unknown(intervalVariables.Replace(expr), known, nil)
	switch {
	case err != nil:
		return "query " + expr + " does not parse: " + err.Error()
	case len(unknown) > 0:
		return "query " + expr + " names metrics no code registers: " + strings.Join(unknown, ", ")
	}
	problems, err := metricset.LabelProblems(intervalVariables.Replace(expr), known, scrapeLabels)
	if err != nil || len(problems) > 0 {
		return fmt.Sprintf("query %s uses labels its metrics do not have: %v %v", expr, problems, err)
	}
	return ""
}

// scrapeLabels are the labels config/prometheus's PodMonitors add, by component.
var scrapeLabels map[string][]string

func TestMain(m *testing.M) {
	var err error
	if scrapeLabels, err = metricset.ScrapeLabels(filepath.Join("..", "prometheus", "monitors.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The check is not vacuous: a misspelt metric and a query left with a Grafana variable where
// PromQL needs a value are caught.
func TestCheckCatchesBadQueries(t *testing.T) {
	known := registered(t)
	for _, expr := range []string{
		`sum by (pool) (rate(mcs_config_request_total[$__rate_interval]))`,
		`sum by (pool) (rate(mcs_config_requests_total[$window]))`,
		`max by (pool) (mco_machine_count) > $threshold`,
		`sum by (node) (mco_machine_count)`, // per pool, no node label
	} {
		if check(expr, known) == "" {
			t.Errorf("%s passed", expr)
		}
	}
	if problem := check(`sum by (pool, code) (rate(mcs_config_requests_total{pool=~"$pool"}[$__rate_interval]))`, known); problem != "" {
		t.Error(problem)
	}
}

var labelValues = regexp.MustCompile(`^label_values\((\w+),\s*(\w+)\)$`)

// Template variables read label values of registered metrics that have that label.
func TestVariablesReadRegisteredLabels(t *testing.T) {
	known := registered(t)
	for file, d := range dashboards(t) {
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				if err := json.Unmarshal(v.Query, &q.Query); err != nil {
					t.Fatalf("%s: variable %s: %v", file, v.Name, err)
				}
			}
			m := labelValues.FindStringSubmatch(q.Query)
			if m == nil {
				t.Errorf("%s: variable %s: query %q is not label_values(metric, label)", file, v.Name, q.Query)
				continue
			}
			if metric, ok := known[m[1]]; !ok || !slices.Contains(metric.Labels, m[2]) {
				t.Errorf("%s: variable %s: %s has no label %s", file, v.Name, m[1], m[2])
			}
		}
	}
}

// The overview shows rollout progress per pool, node states, drain and apply durations,
// reboots, and served configs per pool and response code.
func TestOverviewShowsARollout(t *testing.T) {
	d, ok := dashboards(t)["mco.json"]
	if !ok {
		t.Fatal("config/grafana/mco.json is missing")
	}
	var all []string
	for _, exprs := range queries(d.Panels) {
		all = append(all, exprs...)
	}
	text := strings.Join(all, "\n")
	for what, series := range map[string]string{
		"rollout progress per pool": "mco_updated_machine_count",
		"node states":               "mcd_state",
		"drain durations":           "mcc_drain_duration_seconds_bucket",
		"apply durations":           "mcd_apply_duration_seconds_bucket",
		"reboots":                   "mcd_boot_time_seconds",
		"served configs":            "mcs_config_requests_total",
	} {
		if !strings.Contains(text, series) {
			t.Errorf("no panel shows %s (%s)", what, series)
		}
	}
	if !strings.Contains(text, "by (pool, code)") {
		t.Error("served configs are not broken down by pool and response code")
	}
}
