package plan_test

import (
	"strings"
	"testing"

	apicfgv1 "github.com/openshift/api/config/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/registries"
)

// The registries.conf the registries controller writes (OpenShift's encoding, byte for byte)
// over the built-in base, judged by the agent: mirror-set changes an admin makes day to day.
func TestRegistriesConfDrainOnGeneratedFiles(t *testing.T) {
	idms := func(name, source string, mirrors ...string) *apicfgv1.ImageDigestMirrorSet {
		set := &apicfgv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		m := apicfgv1.ImageDigestMirrors{Source: source}
		for _, l := range mirrors {
			m.Mirrors = append(m.Mirrors, apicfgv1.ImageMirror(l))
		}
		set.Spec.ImageDigestMirrors = []apicfgv1.ImageDigestMirrors{m}
		return set
	}
	itms := func(name, source, mirror string) *apicfgv1.ImageTagMirrorSet {
		set := &apicfgv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		set.Spec.ImageTagMirrors = []apicfgv1.ImageTagMirrors{{Source: source, Mirrors: []apicfgv1.ImageMirror{apicfgv1.ImageMirror(mirror)}}}
		return set
	}
	icsp := func(name, source, mirror string) *apioperatorsv1alpha1.ImageContentSourcePolicy {
		p := &apioperatorsv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
		p.Spec.RepositoryDigestMirrors = []apioperatorsv1alpha1.RepositoryDigestMirrors{{Source: source, Mirrors: []string{mirror}}}
		return p
	}
	neverSource := idms("app", "quay.example.org/team/app", "mirror.example.net/team/app")
	neverSource.Spec.ImageDigestMirrors[0].MirrorSourcePolicy = apicfgv1.NeverContactSource

	app := registries.Cluster{IDMS: []*apicfgv1.ImageDigestMirrorSet{idms("app", "quay.example.org/team/app", "mirror.example.net/team/app")}}
	cases := []struct {
		name     string
		old, new registries.Cluster
		drain    bool
		why      string
	}{
		{"second mirror in the IDMS", app,
			registries.Cluster{IDMS: []*apicfgv1.ImageDigestMirrorSet{idms("app", "quay.example.org/team/app", "mirror.example.net/team/app", "backup.example.net/team/app")}},
			false, "added digest-only mirror backup.example.net/team/app to quay.example.org/team/app"},
		{"another IDMS", app,
			registries.Cluster{IDMS: []*apicfgv1.ImageDigestMirrorSet{app.IDMS[0], idms("db", "quay.example.org/team/db", "mirror.example.net/team/db")}},
			false, "added registry quay.example.org/team/db with digest-only mirrors mirror.example.net/team/db"},
		{"first IDMS over the base file", registries.Cluster{}, app, false,
			"added registry quay.example.org/team/app with digest-only mirrors mirror.example.net/team/app"},
		{"ICSP replaced by the same IDMS (OpenShift writes both alike)", registries.Cluster{ICSP: []*apioperatorsv1alpha1.ImageContentSourcePolicy{icsp("app", "quay.example.org/team/app", "mirror.example.net/team/app")}},
			app, false, "no registry, mirror or search entry changed"},
		{"IDMS deleted", app, registries.Cluster{Image: &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: apicfgv1.ImageSpec{RegistrySources: apicfgv1.RegistrySources{InsecureRegistries: []string{}}}}},
			true, "registry quay.example.org/team/app removed"},
		{"ITMS for the same source", app,
			registries.Cluster{IDMS: app.IDMS, ITMS: []*apicfgv1.ImageTagMirrorSet{itms("app-tags", "quay.example.org/team/app", "tags.example.net/team/app")}},
			true, "mirror tags.example.net/team/app added to registry quay.example.org/team/app is used for tag pulls only"},
		{"never contact the source", app, registries.Cluster{IDMS: []*apicfgv1.ImageDigestMirrorSet{neverSource}},
			true, "registry quay.example.org/team/app: blocked changed from false to true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			drain, why := plan.RegistriesConfDrain(generated(t, tc.old), generated(t, tc.new))
			if drain != tc.drain || !strings.Contains(why, tc.why) {
				t.Fatalf("RegistriesConfDrain = %t, %q; want %t, containing %q\nold:\n%s\nnew:\n%s",
					drain, why, tc.drain, tc.why, generated(t, tc.old), generated(t, tc.new))
			}
		})
	}
}

func generated(t *testing.T, c registries.Cluster) []byte {
	t.Helper()
	p, err := registries.NewPlan(c)
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.Files(registries.Bases{Registries: generatedmc.Base{Data: registries.DefaultRegistriesConf()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == plan.RegistriesConfPath && f.Data != nil {
			return f.Data
		}
	}
	return registries.DefaultRegistriesConf() // not generated: the node keeps the base file
}
