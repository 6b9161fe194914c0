package kubeletconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
)

// The goldens in testdata/openshift were made by OpenShift's own kubelet config controller
// (see testdata/openshift/README.md): each case's MachineConfigs must come out byte for byte.

// goldenCase is a case.yaml: the inputs of one sync.
type goldenCase struct {
	Base     string `json:"base"`
	Features struct {
		Enabled  []string `json:"enabled"`
		Disabled []string `json:"disabled"`
	} `json:"features"`
	APIServer            *configv1.APIServerSpec           `json:"apiServer"`
	WorkerLatencyProfile configv1.WorkerLatencyProfileType `json:"workerLatencyProfile"`
	Pool                 mcfgv1.MachineConfigPool          `json:"pool"`
	// KubeletConfigs: the last is the one synced; earlier ones exist already.
	KubeletConfigs []mcfgv1.KubeletConfig `json:"kubeletConfigs"`
}

// goldenMC is a MachineConfig as the goldens record it.
type goldenMC struct {
	Name            string                  `json:"name"`
	Labels          map[string]string       `json:"labels"`
	Annotations     []string                `json:"annotationKeys"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	KernelArguments []string                `json:"kernelArguments"`
	// Config is spec.config exactly as OpenShift's controller set it.
	Config string `json:"config"`
}

// goldenWant is a want.json: what OpenShift's sync produced.
type goldenWant struct {
	// Base names the file in testdata/openshift/bases with the pool's base MachineConfigs.
	Base           string     `json:"base"`
	MachineConfigs []goldenMC `json:"machineConfigs"`
	// Error is OpenShift's sync error: no MachineConfig was written.
	Error      string                          `json:"error"`
	Conditions []mcfgv1.KubeletConfigCondition `json:"conditions"`
}

const goldenDir = "testdata/openshift"

func loadGolden(t testing.TB, name string) (goldenCase, goldenWant, []*mcfgv1.MachineConfig) {
	t.Helper()
	var c goldenCase
	var want goldenWant
	var bases []goldenMC
	readInto(t, filepath.Join(goldenDir, name, "case.yaml"), &c)
	readInto(t, filepath.Join(goldenDir, name, "want.json"), &want)
	readInto(t, filepath.Join(goldenDir, "bases", want.Base), &bases)
	var mcs []*mcfgv1.MachineConfig
	for _, b := range bases {
		mcs = append(mcs, &mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: b.Name, Labels: b.Labels},
			Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(b.Config)}},
		})
	}
	return c, want, mcs
}

func readInto(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func goldenCases(t *testing.T) []string {
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "bases" {
			names = append(names, e.Name())
		}
	}
	if len(names) < 30 {
		t.Fatalf("only %d golden cases in %s", len(names), goldenDir)
	}
	return names
}

// parseMC parses as the controller does (render's validation, errors naming the MachineConfig).
var parseMC = render.ValidateMachineConfig

func TestOpenShiftGoldens(t *testing.T) {
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			c, want, bases := loadGolden(t, name)
			kc := &c.KubeletConfigs[len(c.KubeletConfigs)-1]
			// OpenShift always has the APIServer API; the fixture's object has no profile
			// unless the case sets one.
			tls := &ClusterTLS{}
			if c.APIServer != nil {
				tls.Profile = c.APIServer.TLSSecurityProfile
			}
			got, err := DesiredFor(kc, Cluster{
				Pools:             []mcfgv1.MachineConfigPool{c.Pool},
				MachineConfigs:    bases,
				KubeletConfigs:    c.KubeletConfigs,
				ClusterTLS:        tls,
				ControllerVersion: "test",
				Parse:             parseMC,
			})
			if want.Error != "" {
				if err == nil {
					t.Fatalf("OpenShift refused it (%s); we generated %d MachineConfigs", want.Error, len(got.MachineConfigs))
				}
				t.Logf("refused as OpenShift does: ours %q, OpenShift's %q", err, want.Error)
				return
			}
			if err != nil {
				t.Fatalf("OpenShift generated %d MachineConfigs; we refused: %v", len(want.MachineConfigs), err)
			}
			if len(got.MachineConfigs) != len(want.MachineConfigs) {
				t.Fatalf("%d MachineConfigs, OpenShift %d", len(got.MachineConfigs), len(want.MachineConfigs))
			}
			for i, w := range want.MachineConfigs {
				checkGoldenMC(t, got.MachineConfigs[i], w)
			}
		})
	}
}

func checkGoldenMC(t *testing.T, got *mcfgv1.MachineConfig, want goldenMC) {
	t.Helper()
	if got.Name != want.Name {
		t.Errorf("name %s, OpenShift %s", got.Name, want.Name)
	}
	if !equalJSON(got.Labels, want.Labels) {
		t.Errorf("labels %v, OpenShift %v", got.Labels, want.Labels)
	}
	var gotKeys []string
	for k := range got.Annotations {
		gotKeys = append(gotKeys, k)
	}
	if !equalJSON(gotKeys, want.Annotations) {
		t.Errorf("annotation keys %v, OpenShift %v", gotKeys, want.Annotations)
	}
	refs := append([]metav1.OwnerReference(nil), got.OwnerReferences...)
	for i := range refs {
		refs[i].UID = ""
	}
	if !equalJSON(refs, want.OwnerReferences) {
		t.Errorf("ownerReferences %+v, OpenShift %+v", refs, want.OwnerReferences)
	}
	if len(got.Spec.KernelArguments) > 0 || len(want.KernelArguments) > 0 {
		t.Errorf("kernelArguments %v, OpenShift %v", got.Spec.KernelArguments, want.KernelArguments)
	}
	if string(got.Spec.Config.Raw) != want.Config {
		t.Errorf("spec.config differs from OpenShift's:\n got: %s\nwant: %s", got.Spec.Config.Raw, want.Config)
		diffFiles(t, got.Spec.Config.Raw, []byte(want.Config))
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// diffFiles shows the decoded files of two generated configs, to tell which one differs.
func diffFiles(t *testing.T, got, want []byte) {
	t.Helper()
	g, err1 := ignition.Parse(got)
	w, err2 := ignition.Parse(want)
	if err1 != nil || err2 != nil {
		t.Logf("parse: %v %v", err1, err2)
		return
	}
	for i := range min(len(g.Storage.Files), len(w.Storage.Files)) {
		gf, wf := g.Storage.Files[i], w.Storage.Files[i]
		gd, _ := fileContents(*gf.Contents.Source, gf.Contents.Compression)
		wd, _ := fileContents(*wf.Contents.Source, wf.Contents.Compression)
		if gf.Path != wf.Path || string(gd) != string(wd) {
			t.Logf("file %d: %s vs OpenShift's %s\n--- ours\n%s\n--- OpenShift\n%s", i, gf.Path, wf.Path, gd, wd)
		}
	}
}

// BenchmarkDesiredFor: one sync's pure work for a documented example on a pool with
// OpenShift's base MachineConfigs (parse, find the base, merge, encode).
func BenchmarkDesiredFor(b *testing.B) {
	c, _, bases := loadGolden(b, "docs-eviction-gc")
	kc := &c.KubeletConfigs[len(c.KubeletConfigs)-1]
	cluster := Cluster{Pools: []mcfgv1.MachineConfigPool{c.Pool}, MachineConfigs: bases, KubeletConfigs: c.KubeletConfigs,
		ClusterTLS: &ClusterTLS{}, ControllerVersion: "bench", Parse: render.NewParseCache(16).Parse}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DesiredFor(kc, cluster); err != nil {
			b.Fatal(err)
		}
	}
}
