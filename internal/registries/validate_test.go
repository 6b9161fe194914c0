package registries

import (
	"strings"
	"testing"

	apicfgv1 "github.com/openshift/api/config/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/config/crd"
)

func idms(name string, m ...apicfgv1.ImageDigestMirrors) *apicfgv1.ImageDigestMirrorSet {
	return &apicfgv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apicfgv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: m}}
}

func itms(name string, m ...apicfgv1.ImageTagMirrors) *apicfgv1.ImageTagMirrorSet {
	return &apicfgv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apicfgv1.ImageTagMirrorSetSpec{ImageTagMirrors: m}}
}

func icsp(name string, m ...apioperatorsv1alpha1.RepositoryDigestMirrors) *apioperatorsv1alpha1.ImageContentSourcePolicy {
	return &apioperatorsv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apioperatorsv1alpha1.ImageContentSourcePolicySpec{RepositoryDigestMirrors: m}}
}

func image(src apicfgv1.RegistrySources) *apicfgv1.Image {
	return &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: apicfgv1.ImageSpec{RegistrySources: src}}
}

func TestNewPlanRefusesByObjectAndField(t *testing.T) {
	cases := []struct {
		name string
		c    Cluster
		want string
	}{
		{"bad insecure scope", Cluster{Image: image(apicfgv1.RegistrySources{InsecureRegistries: []string{"ok.io", "*bad.io"}})},
			`Image cluster: spec.registrySources.insecureRegistries[1]: "*bad.io" is not a registry scope`},
		{"empty blocked scope", Cluster{Image: image(apicfgv1.RegistrySources{BlockedRegistries: []string{""}})},
			`Image cluster: spec.registrySources.blockedRegistries[0]`},
		{"wildcard with a path", Cluster{Image: image(apicfgv1.RegistrySources{AllowedRegistries: []string{"*.example.com/ns"}})},
			`Image cluster: spec.registrySources.allowedRegistries[0]`},
		{"blocked and allowed", Cluster{Image: image(apicfgv1.RegistrySources{BlockedRegistries: []string{"a.io"}, AllowedRegistries: []string{"b.io"}})},
			"Image cluster: spec.registrySources: allowedRegistries and blockedRegistries are both set"},
		{"ICSP source", Cluster{ICSP: []*apioperatorsv1alpha1.ImageContentSourcePolicy{icsp("legacy", apioperatorsv1alpha1.RepositoryDigestMirrors{Source: "quay.io/UPPER", Mirrors: []string{"m.io/x"}})}},
			`ImageContentSourcePolicy legacy: spec.repositoryDigestMirrors[0].source: "quay.io/UPPER"`},
		{"ICSP mirror", Cluster{ICSP: []*apioperatorsv1alpha1.ImageContentSourcePolicy{icsp("legacy", apioperatorsv1alpha1.RepositoryDigestMirrors{Source: "quay.io/x", Mirrors: []string{"ok.io/x", "*.wild.io"}})}},
			`ImageContentSourcePolicy legacy: spec.repositoryDigestMirrors[0].mirrors[1]: "*.wild.io"`},
		{"NeverContactSource on its own source", Cluster{IDMS: []*apicfgv1.ImageDigestMirrorSet{idms("self", apicfgv1.ImageDigestMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"m.io/x", "q.io/x"}, MirrorSourcePolicy: apicfgv1.NeverContactSource})}},
			`ImageDigestMirrorSet self: spec.imageDigestMirrors[0].mirrors[1]: the source "q.io/x" is one of its own mirrors`},
		{"conflicting policies name both objects", Cluster{
			IDMS: []*apicfgv1.ImageDigestMirrorSet{idms("a", apicfgv1.ImageDigestMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"m.io/x"}, MirrorSourcePolicy: apicfgv1.NeverContactSource})},
			ITMS: []*apicfgv1.ImageTagMirrorSet{itms("b", apicfgv1.ImageTagMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"n.io/x"}})}},
			`ImageTagMirrorSet b: spec.imageTagMirrors[0].mirrorSourcePolicy: AllowContactingSource conflicts with NeverContactSource, which ImageDigestMirrorSet a sets for the same source "q.io/x" (spec.imageDigestMirrors[0])`},
		{"an ICSP always allows contacting the source", Cluster{
			IDMS: []*apicfgv1.ImageDigestMirrorSet{idms("a", apicfgv1.ImageDigestMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"m.io/x"}, MirrorSourcePolicy: apicfgv1.NeverContactSource})},
			ICSP: []*apioperatorsv1alpha1.ImageContentSourcePolicy{icsp("legacy", apioperatorsv1alpha1.RepositoryDigestMirrors{Source: "q.io/x", Mirrors: []string{"n.io/x"}})}},
			"ImageContentSourcePolicy legacy: spec.repositoryDigestMirrors[0].mirrorSourcePolicy: AllowContactingSource conflicts"},
		{"a bad release image", Cluster{ReleaseImage: "Not A Reference", Image: image(apicfgv1.RegistrySources{BlockedRegistries: []string{"a.io"}})},
			`ClusterVersion version: status.desired.image: "Not A Reference" is not an image reference`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNewPlanDoesNotDependOnListOrder(t *testing.T) {
	a := idms("a", apicfgv1.ImageDigestMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"b.io/x", "c.io/x"}})
	b := idms("b", apicfgv1.ImageDigestMirrors{Source: "q.io/x", Mirrors: []apicfgv1.ImageMirror{"a.io/x", "b.io/x"}})
	bases := Bases{Registries: baseOf(DefaultRegistriesConf()), Policy: baseOf(DefaultPolicyJSON())}
	var outs []string
	for _, order := range [][]*apicfgv1.ImageDigestMirrorSet{{a, b}, {b, a}} {
		p, err := NewPlan(Cluster{IDMS: order})
		if err != nil {
			t.Fatal(err)
		}
		files, err := p.Files(bases)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(files[0].Data))
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], "a.io/x\"\n    pull-from-mirror = \"digest-only\"\n\n  [[registry.mirror]]\n    location = \"b.io/x\"") {
		t.Fatalf("outputs differ or are not in preference order:\n%s\n---\n%s", outs[0], outs[1])
	}
}

// The patterns are openshift/api's; the CRDs in config/crd carry them too.
func TestPatternsAreTheAPIs(t *testing.T) {
	crds, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(p apiextensionsv1.JSONSchemaProps)
	walk = func(p apiextensionsv1.JSONSchemaProps) {
		if p.Pattern != "" {
			seen[p.Pattern] = true
		}
		for _, c := range p.Properties {
			walk(c)
		}
		if p.Items != nil && p.Items.Schema != nil {
			walk(*p.Items.Schema)
		}
	}
	for _, c := range crds {
		if c.Name == "imagedigestmirrorsets.config.openshift.io" || c.Name == "imagetagmirrorsets.config.openshift.io" {
			for _, v := range c.Spec.Versions {
				walk(*v.Schema.OpenAPIV3Schema)
			}
		}
	}
	for _, p := range []string{MirrorPattern, SourcePattern} {
		if !seen[p] {
			t.Errorf("pattern %q is not in the mirror set CRDs", p)
		}
	}
}
