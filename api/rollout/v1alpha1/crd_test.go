package v1alpha1

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The CRD is generated (go generate ./api/...); this checks what users type depends on it.
func TestGeneratedCRD(t *testing.T) {
	raw, err := os.ReadFile("../../../config/crd-mco/rollout.mco.dev_machineconfigpoolrollouts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != GroupName || crd.Spec.Names.Kind != "MachineConfigPoolRollout" ||
		!slices.Equal(crd.Spec.Names.ShortNames, []string{"mcprollout"}) || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Fatalf("names: %+v, scope %s", crd.Spec.Names, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != GroupVersion.Version || crd.Spec.Versions[0].Subresources.Status == nil {
		t.Fatalf("versions: %+v", crd.Spec.Versions)
	}
	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := schema.Properties["spec"]
	// Every field of the Go types is in the CRD, so a field added without go generate fails here.
	for name, want := range map[string]reflect.Type{
		"spec":   reflect.TypeFor[MachineConfigPoolRolloutSpec](),
		"status": reflect.TypeFor[MachineConfigPoolRolloutStatus](),
	} {
		for i := range want.NumField() {
			f, _, _ := strings.Cut(want.Field(i).Tag.Get("json"), ",")
			if _, ok := schema.Properties[name].Properties[f]; !ok {
				t.Errorf("%s.%s missing from the CRD: run go generate ./api/...", name, f)
			}
		}
	}
	window := spec.Properties["maintenanceWindows"].Items.Schema
	if window.Properties["start"].Pattern == "" || len(window.Properties["days"].Items.Schema.Enum) != 7 {
		t.Errorf("window validation missing: %+v", window.Properties)
	}
}
