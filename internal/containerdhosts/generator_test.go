package containerdhosts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/generatedmc/mctest"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/registries"
)

// registriesGolden is the input half of internal/registries' goldens (made by running
// OpenShift's controller; see that package's golden_test.go).
type registriesGolden struct {
	Inputs struct {
		Pools                      []mcfgv1.MachineConfigPool                       `json:"pools"`
		Image                      *apicfgv1.Image                                  `json:"image"`
		ReleaseImage               string                                           `json:"releaseImage"`
		ImageDigestMirrorSets      []*apicfgv1.ImageDigestMirrorSet                 `json:"imageDigestMirrorSets"`
		ImageTagMirrorSets         []*apicfgv1.ImageTagMirrorSet                    `json:"imageTagMirrorSets"`
		ImageContentSourcePolicies []*apioperatorsv1alpha1.ImageContentSourcePolicy `json:"imageContentSourcePolicies"`
		Bases                      map[string]map[string]string                     `json:"bases"`
	} `json:"inputs"`
	Outputs struct {
		Error string `json:"error"`
	} `json:"outputs"`
}

// nodeRegistriesConf runs mco's registries generator as its controller does and returns the
// registries.conf each pool's nodes get ("" where the MachineConfig writes none), or the
// generator's refusal.
func nodeRegistriesConf(t *testing.T, g registriesGolden) (map[string]string, error) {
	t.Helper()
	plan, err := registries.NewPlan(registries.Cluster{Image: g.Inputs.Image, ReleaseImage: g.Inputs.ReleaseImage,
		IDMS: g.Inputs.ImageDigestMirrorSets, ITMS: g.Inputs.ImageTagMirrorSets, ICSP: g.Inputs.ImageContentSourcePolicies})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, pool := range registries.Pools(g.Inputs.Pools) {
		b := g.Inputs.Bases[pool.Name]
		mc, err := plan.Generate(pool, registries.Bases{
			Registries: generatedmc.Base{Source: "OpenShift's template", Data: []byte(b[registries.RegistriesConfPath])},
			Policy:     generatedmc.Base{Source: "OpenShift's template", Data: []byte(b[registries.PolicyJSONPath])},
		}, "test")
		if err != nil {
			return nil, err
		}
		out[pool.Name] = mctest.Files(t, mc)[registries.RegistriesConfPath]
	}
	return out, nil
}

// outcome is what FromRegistriesConf makes of a case: the files' directories, or the refusals.
type outcome struct {
	hosts   []string
	refused []refusal
}

// TestGeneratedRegistriesConf feeds FromRegistriesConf exactly what nodes get: the
// registries.conf of internal/registries' generator for the inputs of its OpenShift goldens.
// Every golden must be listed, so that a new one is looked at here too.
func TestGeneratedRegistriesConf(t *testing.T) {
	want := map[string]outcome{
		// Only policy.json, or an empty registries.conf: nothing for containerd.
		"allowed-registries":  {},
		"empty-image":         {},
		"insecure-empty-list": {},
		"search-registries":   {},
		// Blocked registries (blockedRegistries, the release payload's, NeverContactSource).
		"blocked-payload-digest-with-mirror": {refused: []refusal{{"other.io", "blocked"}, {"release-reg.io", "blocked"},
			{"release-reg.io/myuser/myimage", "blocked"}, {"release-reg.io/myuser/myimage", "mirror.location"}}},
		"blocked-payload-mirror-blocked-too": {refused: []refusal{{"mirror.local", "blocked"}, {"release-reg.io/myuser/myimage", "mirror.location"}}},
		"blocked-payload-repo-exact":         {refused: []refusal{{"release-reg.io/myuser/myimage", "blocked"}, {"release-reg.io/myuser/myimage", "mirror.location"}}},
		"blocked-payload-with-mirror":        {refused: []refusal{{"other.io", "blocked"}, {"release-reg.io/myuser/myimage", "mirror.location"}}},
		"blocked-payload-without-mirror":     {refused: []refusal{{"other.io", "blocked"}}},
		"docs-idms-never-contact-source": {refused: []refusal{{"registry.access.redhat.com/ubi8/ubi-minimal", "blocked"},
			{"registry.access.redhat.com/ubi8/ubi-minimal", "mirror.location"}}},
		"unit-insecure-blocked": {refused: []refusal{{"blocked.com", "blocked"}, {"common.com", "blocked"}, {"docker.io", "blocked"}}},
		// OpenShift's documented mirror sets rename the repository (ubi8/ubi-minimal to
		// digest-example/ubi-minimal, openshift4 to redhat).
		"docs-itms": {refused: []refusal{{"registry.redhat.io/openshift4", "mirror.location"}}},
		"e2e-icsp":  {refused: []refusal{{"registry.access.redhat.com/ubi8/icsp-ubi-minimal", "mirror.location"}}},
		"mirror-order-merge": {refused: []refusal{{"quay.io/ns/app", "mirror.location"}, {"quay.io/ns/app", "mirror.location"},
			{"quay.io/ns/app", "mirror.location"}}},
		"nested-scope": {refused: []refusal{{"quay.io/ns/blocked", "blocked"}}},
		"itms-wildcard-insecure-mirror": {refused: []refusal{{"*.mirror.example.com", "prefix"}, {"docker.io/library", "blocked"},
			{"docker.io/library", "mirror.pull-from-mirror"}}},
		"unit-wildcards-icsp": {refused: []refusal{
			{"*.blocked-example.com", "prefix"}, {"*.blocked.insecure-example.com", "prefix"}, {"*.insecure-example.com", "prefix"}, {"*.insecure.blocked-example.com", "prefix"},
			{"blocked.com", "blocked"}, {"blocked.com/ns-b/ns2-b", "blocked"}, {"blocked.com/ns-b/ns2-b", "mirror.location"}, {"blocked.com/ns-b/ns2-b", "mirror.location"},
			{"insecure.com/ns-i1", "mirror.location"}, {"insecure.com/ns-i1", "mirror.location"},
			{"other.com/ns-o3", "mirror.location"}, {"other.com/ns-o3", "mirror.location"}, {"other.com/ns-o3", "mirror.location"}}},
		// Whole registries mirrored by whole registries: everything maps.
		"unit-idms-itms-icsp-merge": {hosts: []string{"registry-a.com", "registry-b.com", "registry-c.com"}},
	}
	paths, err := filepath.Glob("../registries/testdata/openshift/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no goldens in internal/registries: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var g registriesGolden
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			confs, err := nodeRegistriesConf(t, g)
			if g.Outputs.Error != "" {
				if err == nil {
					t.Fatal("the generator accepted a case OpenShift refuses")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[name]
			if !ok {
				for pool, conf := range confs {
					files, err := FromRegistriesConf([]byte(conf))
					t.Logf("%s: %d files, %v", pool, len(files), err)
				}
				t.Fatal("a golden this test does not list: add what containerd makes of it")
			}
			for pool, conf := range confs {
				files, err := FromRegistriesConf([]byte(conf))
				got := refusals(t, err)
				slices.SortFunc(got, cmpRefusal)
				slices.SortFunc(w.refused, cmpRefusal)
				if !slices.Equal(got, w.refused) {
					t.Errorf("pool %s: refused %v, want %v\n%v", pool, got, w.refused, err)
				}
				var hosts []string
				for _, f := range files {
					hosts = append(hosts, filepath.Base(filepath.Dir(f.Path)))
				}
				if !slices.Equal(hosts, w.hosts) {
					t.Errorf("pool %s: files for %v, want %v", pool, hosts, w.hosts)
				}
			}
		})
	}
}

// TestGeneratedRegistriesConfThatMaps runs the generator on mirror sets containerd can follow
// (whole registries, repositories mirrored at the same path or under a prefix, an insecure
// registry) and compares the files to testdata/generated/<host>.toml, checked by hand against
// containerd's docs/hosts.md (and by containerd's own parser in TestContainerdReadsTheFiles).
func TestGeneratedRegistriesConfThatMaps(t *testing.T) {
	conf := generatedMappable(t)
	files, err := FromRegistriesConf([]byte(conf))
	if err != nil {
		t.Fatalf("%v\nfrom:\n%s", err, conf)
	}
	golden, _ := filepath.Glob("testdata/generated/*.toml")
	if len(files) != len(golden) {
		t.Errorf("%d files, %d goldens", len(files), len(golden))
	}
	for _, f := range files {
		host := filepath.Base(filepath.Dir(f.Path))
		want, err := os.ReadFile(filepath.Join("testdata/generated", host+".toml"))
		if err != nil {
			t.Errorf("%s:\n%s", err, f.Data)
			continue
		}
		if string(f.Data) != string(want) {
			t.Errorf("%s:\n%s", f.Path, diff(string(want), string(f.Data)))
		}
	}
}

// generatedMappable is the worker pool's registries.conf from the generator for mirror sets
// containerd can follow.
func generatedMappable(t *testing.T) string {
	t.Helper()
	var g registriesGolden
	g.Inputs.Pools = []mcfgv1.MachineConfigPool{{}}
	g.Inputs.Pools[0].Name = "worker"
	g.Inputs.Pools[0].Labels = map[string]string{protocol.BuiltInPoolLabel: ""}
	g.Inputs.Image = &apicfgv1.Image{}
	g.Inputs.Image.Name = "cluster"
	g.Inputs.Image.Spec.RegistrySources.InsecureRegistries = []string{"insecure.example.com"}
	idms := &apicfgv1.ImageDigestMirrorSet{}
	idms.Name = "digests"
	idms.Spec.ImageDigestMirrors = []apicfgv1.ImageDigestMirrors{
		{Source: "quay.io/ns", Mirrors: []apicfgv1.ImageMirror{"mirror.example.com/ns", "cache.example.com:5000/quay/ns"}},
		{Source: "registry-a.example.com", Mirrors: []apicfgv1.ImageMirror{"insecure.example.com/registry-a"}},
	}
	itms := &apicfgv1.ImageTagMirrorSet{}
	itms.Name = "tags"
	itms.Spec.ImageTagMirrors = []apicfgv1.ImageTagMirrors{{Source: "registry-a.example.com", Mirrors: []apicfgv1.ImageMirror{"tags.example.com"}}}
	g.Inputs.ImageDigestMirrorSets = []*apicfgv1.ImageDigestMirrorSet{idms}
	g.Inputs.ImageTagMirrorSets = []*apicfgv1.ImageTagMirrorSet{itms}
	g.Inputs.Bases = map[string]map[string]string{"worker": {
		registries.RegistriesConfPath: string(registries.DefaultRegistriesConf()),
		registries.PolicyJSONPath:     string(registries.DefaultPolicyJSON()),
	}}
	confs, err := nodeRegistriesConf(t, g)
	if err != nil {
		t.Fatal(err)
	}
	return confs["worker"]
}
