package install

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mco-dev/mco/config/crd"
)

// TestCRDsAsEveryInstallGetsThem: config/default installs each CRD with the same names as
// crd.All (mco dev up, envtest), mco's short names included (`kubectl get mcn`).
func TestCRDsAsEveryInstallGetsThem(t *testing.T) {
	all, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	built := map[string][]string{}
	for _, o := range objects(t) {
		if o.GetKind() == "CustomResourceDefinition" {
			names, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "names", "shortNames")
			built[o.GetName()] = names
		}
	}
	for _, c := range all {
		got, ok := built[c.Name]
		if !ok {
			t.Errorf("config/default does not install %s", c.Name)
			continue
		}
		if !slices.Equal(got, c.Spec.Names.ShortNames) {
			t.Errorf("%s: config/default gives short names %v, crd.All %v", c.Name, got, c.Spec.Names.ShortNames)
		}
	}
	for name, short := range crd.ShortNames {
		for _, c := range all {
			if c.Name == name && !slices.Equal(c.Spec.Names.ShortNames, short) {
				t.Errorf("%s: crd.All gives %v, want %v", name, c.Spec.Names.ShortNames, short)
			}
		}
	}
}
