package metricset

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
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

// covered are the packages Registered reads; a collector created anywhere else would be
// exported without being checked against rules, dashboards and docs.
var covered = []string{"internal/controller/bootimage", "internal/controller/drain", "internal/controller/node", "internal/daemon", "internal/server"}

var newCollector = regexp.MustCompile(`prometheus\.New(Counter|Gauge|Histogram|Summary)(Vec|Func)?\(`)

func TestEveryPackageWithCollectorsIsListed(t *testing.T) {
	root := testenv.RepoRoot()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if newCollector.Match(data) {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			found[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range found {
		if !slices.Contains(covered, dir) {
			t.Errorf("%s creates Prometheus collectors that metricset.Registered does not list", dir)
		}
	}
	for _, dir := range covered {
		if !found[dir] {
			t.Errorf("%s creates no collectors any more; drop it from metricset", dir)
		}
	}
}
