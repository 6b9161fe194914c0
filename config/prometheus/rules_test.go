// Package monitoring tests config/prometheus: every rule parses with Prometheus's own PromQL
// parser and names only metrics the code registers (internal/metricset), every alert has its
// runbook in docs/runbooks, every registered metric is documented in docs/metrics.md, and the
// PodMonitors reach a port the components really listen on (config/with-prometheus).
package monitoring

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/metricset"
	"github.com/mco-dev/mco/internal/testenv"
)

// RunbookBase is where runbook_url annotations point: docs/runbooks/<alert>.md of the repository.
const RunbookBase = "https://github.com/mco-dev/mco/blob/main/docs/runbooks/"

type rule struct {
	Group       string
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type prometheusRule struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// rules reads every PrometheusRule among the component's resources (kustomization.yaml), so a
// rule file left out of the kustomization is not tested either, and fails TestRulesAreInstalled.
func rules(t *testing.T) []rule {
	t.Helper()
	var out []rule
	for _, file := range resources(t) {
		for _, doc := range documents(t, file) {
			var pr prometheusRule
			if err := yaml.Unmarshal(doc, &pr); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if pr.Kind != "PrometheusRule" {
				continue
			}
			for _, g := range pr.Spec.Groups {
				for _, r := range g.Rules {
					r.Group = g.Name
					out = append(out, r)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no rules in config/prometheus")
	}
	return out
}

func resources(t *testing.T) []string {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	data, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	return k.Resources
}

func documents(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

func registered(t *testing.T) map[string]metricset.Metric {
	t.Helper()
	ms, err := metricset.Registered()
	if err != nil {
		t.Fatal(err)
	}
	return metricset.ByName(ms)
}

// Prometheus's own series, which any rule may use.
var prometheusSeries = map[string]bool{"up": true, "scrape_samples_scraped": true}

// Every expression parses, and every metric it names is registered by mco's code or recorded
// by one of these rules.
func TestRulesNameRegisteredMetrics(t *testing.T) {
	known := registered(t)
	all := rules(t)
	also := clone(prometheusSeries)
	for _, r := range all {
		if r.Record != "" {
			also[r.Record] = true
		}
	}
	for _, r := range all {
		name := r.Alert + r.Record
		if (r.Alert == "") == (r.Record == "") {
			t.Errorf("group %s: a rule is either an alert or a recording rule: %+v", r.Group, r)
			continue
		}
		unknown, err := metricset.Unknown(r.Expr, known, also)
		if err != nil {
			t.Errorf("%s: expression does not parse: %v", name, err)
			continue
		}
		if len(unknown) > 0 {
			t.Errorf("%s names metrics no code registers: %v", name, unknown)
		}
	}
}

// The check above is not vacuous: a misspelt metric, a histogram suffix on a gauge and a
// syntax error are each caught.
func TestCheckCatchesBadExpressions(t *testing.T) {
	known := registered(t)
	for expr, want := range map[string][]string{
		`max by (pool) (mco_degraded_machine_counts) > 0`:                      {"mco_degraded_machine_counts"},
		`mcd_state_bucket > 0`:                                                 {"mcd_state_bucket"},
		`histogram_quantile(0.9, rate(mcd_apply_duration_seconds_bucket[5m]))`: nil,
		`{__name__="mcs_no_such_total"} > 0`:                                   {"mcs_no_such_total"},
	} {
		got, err := metricset.Unknown(expr, known, prometheusSeries)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Unknown(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, expr := range []string{`max by (pool (mco_machine_count)`, `{__name__=~"mco_.*"} > 0`} {
		if _, err := metricset.Unknown(expr, known, prometheusSeries); err == nil {
			t.Errorf("Unknown(%q): no error", expr)
		}
	}
}

var runbookSections = []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation"}

// Every alert has a severity, a summary and a description, and links its runbook, which
// exists and has the four sections; no runbook is left for an alert that is gone.
func TestAlertsHaveRunbooks(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "docs", "runbooks")
	alerts := map[string]bool{}
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		if alerts[r.Alert] {
			t.Errorf("alert %s is defined twice", r.Alert)
		}
		alerts[r.Alert] = true
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: summary or description missing", r.Alert)
		}
		if want := RunbookBase + r.Alert + ".md"; r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		text, err := os.ReadFile(filepath.Join(dir, r.Alert+".md"))
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		for _, s := range runbookSections {
			if !bytes.Contains(text, []byte("\n"+s+"\n")) {
				t.Errorf("docs/runbooks/%s.md has no section %q", r.Alert, s)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".md"); name != "README" && !alerts[name] {
			t.Errorf("docs/runbooks/%s.md: no alert %s", name, name)
		}
	}
}

// Every YAML file of the directory is a resource of the component: a rule file not in the
// kustomization would never be installed (nor tested).
func TestRulesAreInstalled(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	listed := resources(t)
	for _, f := range files {
		if f == "kustomization.yaml" || strings.HasSuffix(f, "-metrics.yaml") { // patches
			continue
		}
		if !slices.Contains(listed, f) {
			t.Errorf("%s is not in kustomization.yaml's resources", f)
		}
	}
}

func clone(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

func scrapeLabels(t *testing.T) map[string][]string {
	t.Helper()
	ls, err := metricset.ScrapeLabels("monitors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, exporter := range []string{metricset.Controller, metricset.Server, metricset.Daemon} {
		if ls[exporter] == nil {
			t.Fatalf("monitors.yaml has no PodMonitor for component %s", exporter)
		}
	}
	return ls
}

// Every label a rule selects on, groups by or matches on is one the metrics it reads carry,
// registered by the code or added by the PodMonitor (the agents' node label).
func TestRulesUseLabelsTheMetricsHave(t *testing.T) {
	known := registered(t)
	scrape := scrapeLabels(t)
	for _, r := range rules(t) {
		problems, err := metricset.LabelProblems(r.Expr, known, scrape)
		if err != nil {
			t.Errorf("%s: %v", r.Alert+r.Record, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", r.Alert+r.Record, p)
		}
	}
}

// The label check is not vacuous.
func TestLabelCheckCatchesMissingLabels(t *testing.T) {
	known := registered(t)
	scrape := scrapeLabels(t)
	for expr, ok := range map[string]bool{
		`max by (node) (mco_degraded_machine_count) > 0`:                                          false, // per pool, the controller's target has no node
		`mcs_config_requests_refused_total{code="403"} > 0`:                                       false,
		`max by (pool) (mco_machine_count) - on (node) max by (pool) (mco_updated_machine_count)`: false,
		`sum by (node) (mcd_reboots_failed_total)`:                                                true, // the PodMonitor adds node
		`sum by (le) (rate(mcd_apply_duration_seconds_bucket[5m]))`:                               true,
	} {
		problems, err := metricset.LabelProblems(expr, known, scrape)
		if err != nil || (len(problems) == 0) != ok {
			t.Errorf("LabelProblems(%q) = %v, %v", expr, problems, err)
		}
	}
}

var templateLabel = regexp.MustCompile(`\$labels\.(\w+)`)

// Every {{ $labels.X }} of an alert's summary and description is a label its expression's
// result has: a pool alert cannot name a node.
func TestAlertTextUsesResultLabels(t *testing.T) {
	known := registered(t)
	scrape := scrapeLabels(t)
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		out, ok, err := metricset.OutputLabels(r.Expr, known, scrape)
		if err != nil || !ok {
			t.Errorf("%s: cannot tell the labels of %q (%v); keep alert expressions to selectors and aggregations compared with a number", r.Alert, r.Expr, err)
			continue
		}
		for key, text := range r.Annotations {
			for _, m := range templateLabel.FindAllStringSubmatch(text, -1) {
				if !slices.Contains(out, m[1]) {
					t.Errorf("%s: annotation %s uses $labels.%s; the result has only %v", r.Alert, key, m[1], out)
				}
			}
		}
	}
}
