package metricset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// operatorTargetLabels are the labels the Prometheus Operator gives every PodMonitor target.
var operatorTargetLabels = []string{"job", "instance", "namespace", "pod", "container", "endpoint"}

// ScrapeLabels reads the PodMonitors in file (config/prometheus/monitors.yaml) and returns, by
// exporter (the pods' app.kubernetes.io/component label), the labels scraping adds to its
// series: the operator's target labels and the relabelings' target labels.
func ScrapeLabels(file string) (map[string][]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var pm struct {
			Kind string `json:"kind"`
			Spec struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				Endpoints []struct {
					Relabelings []struct {
						TargetLabel string `json:"targetLabel"`
					} `json:"relabelings"`
				} `json:"podMetricsEndpoints"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &pm); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if pm.Kind != "PodMonitor" {
			continue
		}
		exporter := pm.Spec.Selector.MatchLabels["app.kubernetes.io/component"]
		ls := append([]string{}, operatorTargetLabels...)
		for _, ep := range pm.Spec.Endpoints {
			for _, rl := range ep.Relabelings {
				if rl.TargetLabel != "" {
					ls = append(ls, rl.TargetLabel)
				}
			}
		}
		out[exporter] = ls
	}
}
