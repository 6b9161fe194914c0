package kubeletconfig

import (
	"fmt"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
)

func builtinPool(t *testing.T, name string) *mcfgv1.MachineConfigPool {
	t.Helper()
	p, err := pools.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// customPool is a pool as OpenShift's docs make one: role worker and its own.
func customPool(name string) *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pools.operator.machineconfiguration.openshift.io/" + name: ""}},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "machineconfiguration.openshift.io/role", Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", name}}}},
		},
	}
}

// kubeletConfig builds a KubeletConfig from YAML, as the API server would hand it over.
func kubeletConfig(t *testing.T, doc string) *mcfgv1.KubeletConfig {
	t.Helper()
	kc := &mcfgv1.KubeletConfig{}
	if err := yaml.UnmarshalStrict([]byte(doc), kc); err != nil {
		t.Fatal(err)
	}
	if kc.Name == "" {
		kc.Name = "kc"
	}
	return kc
}

// raw is spec.kubeletConfig as the API server returns it (compact JSON).
func raw(t *testing.T, doc string) *runtime.RawExtension {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: js}
}

func at(minute int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))
}

// fileContents decodes a generated file's inline contents, which are never compressed.
func fileContents(source string, compression *string) ([]byte, error) {
	if compression != nil && *compression != "" {
		return nil, fmt.Errorf("compressed (%s)", *compression)
	}
	url, err := dataurl.DecodeString(source)
	if err != nil {
		return nil, err
	}
	return url.Data, nil
}
