package metricset

import (
	"slices"
	"testing"
)

// A few metrics of each component, with the type and labels their code gives them: the
// listing reads the real collectors, not a copy of their names.
func TestRegisteredReadsTheCollectors(t *testing.T) {
	ms, err := Registered()
	if err != nil {
		t.Fatal(err)
	}
	known := ByName(ms)
	for _, want := range []Metric{
		{Name: "mco_machine_count", Type: "gauge", Labels: []string{"pool"}, Exporter: Controller},
		{Name: "mcc_drain_err", Type: "gauge", Labels: []string{"node"}, Exporter: Controller},
		{Name: "mcc_drain_duration_seconds", Type: "histogram", Exporter: Controller},
		{Name: "mco_boot_image_update_degraded", Type: "gauge", Exporter: Controller},
		{Name: "mcs_config_requests_total", Type: "counter", Labels: []string{"pool", "code", "version"}, Exporter: Server},
		{Name: "mcs_config_requests_rate_limited_total", Type: "counter", Exporter: Server},
		{Name: "mcd_state", Type: "gauge", Labels: []string{"state", "reason"}, Exporter: Daemon},
		{Name: "mcd_apply_duration_seconds", Type: "histogram", Exporter: Daemon},
		{Name: "mcd_reboots_failed_total", Type: "counter", Exporter: Daemon},
	} {
		got, ok := known[want.Name]
		if !ok {
			t.Errorf("%s is not listed", want.Name)
			continue
		}
		if got.Type != want.Type || got.Exporter != want.Exporter || !slices.Equal(got.Labels, want.Labels) {
			t.Errorf("%s: got %+v, want %+v", want.Name, got, want)
		}
	}
	if len(known) != len(ms) {
		t.Errorf("%d metrics listed, %d names: some name is registered twice", len(ms), len(known))
	}
}

func TestSeriesOfHistograms(t *testing.T) {
	known := map[string]Metric{
		"mcd_apply_duration_seconds": {Name: "mcd_apply_duration_seconds", Type: "histogram"},
		"mcd_state":                  {Name: "mcd_state", Type: "gauge"},
	}
	for name, want := range map[string]bool{
		"mcd_apply_duration_seconds_bucket": true,
		"mcd_apply_duration_seconds_count":  true,
		"mcd_apply_duration_seconds":        true,
		"mcd_state":                         true,
		"mcd_state_bucket":                  false, // not a histogram
		"mcd_unknown":                       false,
	} {
		if _, got := Series(known, name); got != want {
			t.Errorf("Series(%q) = %v, want %v", name, got, want)
		}
	}
}
