package mctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GoldenMC is a MachineConfig as the goldens made by running OpenShift's controllers record it.
type GoldenMC struct {
	Name            string                  `json:"name"`
	Labels          map[string]string       `json:"labels"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	Config          string                  `json:"config"`
}

// LoadGoldens decodes every testdata/openshift/*.json of the calling package into T, by file
// name without ".json"; none at all fails t.
func LoadGoldens[T any](t testing.TB) map[string]T {
	t.Helper()
	paths, err := filepath.Glob("testdata/openshift/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	out := map[string]T{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var g T
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = g
	}
	return out
}

// CompareToOpenShift fails t where got differs from the MachineConfigs OpenShift made: their
// number and order, names, labels, ownerReferences and spec.config byte for byte.
func CompareToOpenShift(t testing.TB, got []*mcfgv1.MachineConfig, want []GoldenMC) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d MachineConfigs, OpenShift made %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name {
			t.Errorf("name %q, OpenShift's %q", g.Name, w.Name)
		}
		if gl, wl := mustJSON(t, g.Labels), mustJSON(t, w.Labels); gl != wl {
			t.Errorf("%s: labels %s, OpenShift's %s", w.Name, gl, wl)
		}
		if gr, wr := mustJSON(t, g.OwnerReferences), mustJSON(t, w.OwnerReferences); gr != wr {
			t.Errorf("%s: ownerReferences %s, OpenShift's %s", w.Name, gr, wr)
		}
		if string(g.Spec.Config.Raw) != w.Config {
			t.Errorf("%s: spec.config differs from OpenShift's\n got: %s\nwant: %s", w.Name, g.Spec.Config.Raw, w.Config)
		}
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
