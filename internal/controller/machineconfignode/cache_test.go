package machineconfignode

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCacheKeepsSpecAndOwnersOnly(t *testing.T) {
	kept := mcfgv1.MachineConfigNode{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-0", ResourceVersion: "9", OwnerReferences: []metav1.OwnerReference{{Kind: "Node", Name: "worker-0"}}},
		Spec: mcfgv1.MachineConfigNodeSpec{
			Node: mcfgv1.MCOObjectReference{Name: "worker-0"}, Pool: mcfgv1.MCOObjectReference{Name: "worker"},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: "rendered-worker-2"},
		},
	}
	full := kept.DeepCopy()
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "machine-config-daemon"}}
	full.Status.Conditions = []metav1.Condition{{Type: string(mcfgv1.MachineConfigNodeUpdated), Status: metav1.ConditionTrue}}
	full.Status.ConfigVersion = &mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-worker-1", Desired: "rendered-worker-2"}

	_, by := CacheByObject()
	got, err := by.Transform(full)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, &kept) {
		t.Fatalf("cached:\n%+v\nwant\n%+v", got, &kept)
	}
}
