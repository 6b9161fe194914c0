package monitoring

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"sigs.k8s.io/yaml"
)

// Prometheus's own rule file check (what `promtool check rules` runs): rule names, for:
// durations, label names and annotation templates, on the PrometheusRule's spec as a rule file.
func TestRulesPassPrometheusRuleFileCheck(t *testing.T) {
	for _, file := range resources(t) {
		for _, doc := range documents(t, file) {
			var pr struct {
				Kind string         `json:"kind"`
				Spec map[string]any `json:"spec"`
			}
			if err := yaml.Unmarshal(doc, &pr); err != nil {
				t.Fatal(err)
			}
			if pr.Kind != "PrometheusRule" {
				continue
			}
			spec, err := yaml.Marshal(pr.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if _, errs := rulefmt.Parse(spec, false, model.UTF8Validation); len(errs) > 0 {
				t.Errorf("%s: %v", file, errs)
			}
		}
	}
}
