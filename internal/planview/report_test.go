package planview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
)

// mco plan flags a held node as it flags a node mid-update (its note says why).
func TestPlanFlagsHeld(t *testing.T) {
	if got := nodeList([]changeplan.Node{{Name: "a", Held: true}, {Name: "b"}, {Name: "c", Moving: true}}); got != "a*,b,c*" {
		t.Errorf("nodeList = %q, want a*,b,c*", got)
	}
}

func TestLivePlanPrintsWarnings(t *testing.T) {
	var out strings.Builder
	r := &changeplan.Report{Pools: []changeplan.PoolReport{{Pool: "worker", Rendered: "rendered-worker-1", Summary: "renders rendered-worker-1",
		Warnings: []render.Warning{{MachineConfig: "99-worker-qe", Field: "spec.config.networkd", Key: "networkd", Line: 1, Column: 33, Reason: `unknown key "networkd" in spec 3.2.0: ignored`}}}}}
	if err := WriteReport(&out, r, nil); err != nil {
		t.Fatal(err)
	}
	want := `warning: MachineConfig "99-worker-qe": spec.config.networkd: unknown key "networkd" in spec 3.2.0: ignored (line 1 col 33)`
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
	if r.ExitCode() != 0 {
		t.Errorf("exit %d for warnings alone", r.ExitCode())
	}
}

// A warning about a MachineConfig of the -f files is placed in its file, as validate places it,
// not at its position inside the JSON the manifest becomes.
func TestLivePlanPlacesWarningsInTheirFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "qe.yaml")
	manifestYAML := `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 90-worker-qe
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.2.0
    networkd: {}
`
	if err := os.WriteFile(file, []byte(manifestYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := manifest.Load(manifest.Options{}, file)
	if err != nil {
		t.Fatal(err)
	}
	r := &changeplan.Report{Pools: []changeplan.PoolReport{{Pool: "worker", Rendered: "rendered-worker-1", Summary: "renders rendered-worker-1",
		Warnings: []render.Warning{{MachineConfig: "90-worker-qe", Field: "spec.config.networkd", Key: "networkd", Line: 1, Column: 33, Reason: `unknown key "networkd" in spec 3.2.0: ignored`}}}}}
	var out strings.Builder
	if err := WriteReport(&out, r, set); err != nil {
		t.Fatal(err)
	}
	want := "warning: " + file + `:1: MachineConfig 90-worker-qe: spec.config.networkd (line 11 col 5): unknown key "networkd" in spec 3.2.0: ignored`
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}
