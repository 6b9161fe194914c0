package scheme

import (
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
)

func TestServes(t *testing.T) {
	machineSet := machinev1beta1.GroupVersion.WithKind("MachineSet")
	empty := meta.NewDefaultRESTMapper(nil)
	if ok, err := Serves(empty, machineSet); ok || err != nil {
		t.Errorf("no MachineSet kind: got %v, %v; want false, nil", ok, err)
	}
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(machineSet, meta.RESTScopeNamespace)
	if ok, err := Serves(served, machineSet); !ok || err != nil {
		t.Errorf("MachineSet kind mapped: got %v, %v; want true, nil", ok, err)
	}
}
