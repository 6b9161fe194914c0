package render

import (
	"fmt"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/ignition"
)

// The keys of OpenShift's published QE fixtures: a spec 2 networkd section and a file's
// filesystem in spec 3.x configs. Ignition ignores both, with a warning.
const (
	withLeftovers = `{"ignition":{"version":"3.2.0"},"networkd":{"units":[{"name":"10-eth0.network","contents":"[Match]"}]},` +
		`"storage":{"files":[{"filesystem":"root","path":"/etc/qe","contents":{"source":"data:,qe"},"mode":420}]}}`
	withoutLeftovers = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/qe","contents":{"source":"data:,qe"},"mode":420}]}}`
)

// TestRenderWarnsAndRendersAsOpenShift: a MachineConfig with keys Ignition ignores renders,
// to exactly what it renders to without them, and the result names each key.
func TestRenderWarnsAndRendersAsOpenShift(t *testing.T) {
	pool := workerPool(t)
	base := rawMC("00-worker-base", "worker", ign35+`,"storage":{"files":[{"path":"/etc/base","contents":{"source":"data:,b"}}]}}`)
	cache := NewParseCache(16)
	for _, parse := range []struct {
		name string
		fn   func(*mcfgv1.MachineConfig) (ignition.Config, []Warning, error)
	}{{"uncached", nil}, {"parse cache", cache.ParseWithWarnings}, {"parse cache hit", cache.ParseWithWarnings}} {
		t.Run(parse.name, func(t *testing.T) {
			opts := Options{Parse: parse.fn}
			res := mustRender(t, pool, []*mcfgv1.MachineConfig{base, rawMC("99-worker-qe", "worker", withLeftovers)}, opts)
			clean := mustRender(t, pool, []*mcfgv1.MachineConfig{base, rawMC("99-worker-qe", "worker", withoutLeftovers)}, opts)
			if res.Config.Name != clean.Config.Name {
				t.Errorf("rendered %s, but %s without the ignored keys: %s", res.Config.Name, clean.Config.Name, res.Config.Spec.Config.Raw)
			}
			for _, key := range []string{"networkd", "filesystem"} {
				if strings.Contains(string(res.Config.Spec.Config.Raw), key) {
					t.Errorf("rendered config holds %s: %s", key, res.Config.Spec.Config.Raw)
				}
			}
			if len(clean.Warnings) != 0 {
				t.Errorf("a clean render warned: %+v", clean.Warnings)
			}
			want := []Warning{
				{MachineConfig: "99-worker-qe", Field: "spec.config.networkd", Key: "networkd", Line: 1, Column: 33},
				{MachineConfig: "99-worker-qe", Field: "spec.config.storage.files.0.filesystem", Key: "filesystem", Line: 1, Column: 125},
			}
			if len(res.Warnings) != len(want) {
				t.Fatalf("warnings %+v, want %d", res.Warnings, len(want))
			}
			for i, w := range want {
				got := res.Warnings[i]
				if got.MachineConfig != w.MachineConfig || got.Field != w.Field || got.Key != w.Key || got.Line != w.Line || got.Column != w.Column ||
					!strings.Contains(got.Reason, `unknown key "`+w.Key+`" in spec 3.2.0: ignored`) {
					t.Errorf("warning %d = %+v, want %+v", i, got, w)
				}
			}
		})
	}
}

// TestWarningsDoNotHideErrors: what Ignition refuses still fails the render, warnings or not.
func TestWarningsDoNotHideErrors(t *testing.T) {
	for _, raw := range []string{
		`{"ignition":{"version":"3.2.0"},"networkd":{},"storage":{"files":[{"path":"/etc/x","mode":"0644"}]}}`,
		`{"ignition":{"version":"3.2.0"},"networkd":{}} trailing`,
		`{"ignition":{"version":"3.2.0"},"networkd":{},"networkd":{}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","Path":"/etc/y"}]}}`,
	} {
		if _, err := Render(workerPool(t), []*mcfgv1.MachineConfig{rawMC("99-worker-bad", "worker", raw)}, Options{}); err == nil ||
			!strings.Contains(err.Error(), `MachineConfig "99-worker-bad": spec.config`) {
			t.Errorf("%s: err %v, want a refusal naming the MachineConfig", raw, err)
		}
	}
}

func TestSummarizeWarnings(t *testing.T) {
	w := func(mc, key string) Warning {
		return Warning{MachineConfig: mc, Field: "spec.config." + key, Key: key, Line: 1, Column: 33, Reason: `unknown key "` + key + `"`}
	}
	var many []Warning
	for i := range 40 {
		many = append(many, w("99-x", fmt.Sprintf("key%02d", i)))
	}
	huge := w("99-x", strings.Repeat("k", 100_000))
	for _, tc := range []struct {
		name    string
		ws      []Warning
		want    []string
		notWant []string
	}{
		{name: "none", ws: nil},
		{name: "one names MachineConfig, field, key and position", ws: []Warning{w("99-worker-qe", "networkd")},
			want: []string{`MachineConfig "99-worker-qe": spec.config.networkd: unknown key "networkd" (line 1 col 33)`}},
		{name: "bounded in count", ws: many,
			want: []string{`spec.config.key00:`, " more (mco validate lists them)"}, notWant: []string{"spec.config.key39:"}},
		{name: "bounded in length", ws: []Warning{huge, huge, huge, huge, huge},
			want: []string{`spec.config.kkk`, "…", "; and 2 more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SummarizeWarnings(tc.ws)
			if (got == "") != (len(tc.ws) == 0) {
				t.Fatalf("summary %q for %d warnings", got, len(tc.ws))
			}
			for _, s := range tc.want {
				if !strings.Contains(got, s) {
					t.Errorf("%q lacks %q", got, s)
				}
			}
			if len(got) > maxSummary {
				t.Errorf("summary of %d bytes, over %d", len(got), maxSummary)
			}
			for _, s := range tc.notWant {
				if strings.Contains(got, s) {
					t.Errorf("%q has %q", got, s)
				}
			}
		})
	}
}
