package explain

import (
	"reflect"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMachineConfigNodeEvidence: the conditions that say why a node is not as asked carry their
// messages (a failed update, a pinned image set it could not pull); the others are named.
func TestMachineConfigNodeEvidence(t *testing.T) {
	m := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"},
		Spec: mcfgv1.MachineConfigNodeSpec{Pool: mcfgv1.MCOObjectReference{Name: "worker"},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: "rendered-worker-b"}},
		Status: mcfgv1.MachineConfigNodeStatus{Conditions: []metav1.Condition{
			{Type: string(mcfgv1.MachineConfigNodeUpdatePrepared), Status: metav1.ConditionTrue, Message: "prepared"},
			{Type: string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded), Status: metav1.ConditionTrue,
				Message: "PinnedImageSet s: image quay.io/x@sha256:1: not found in the registry"},
			{Type: string(mcfgv1.MachineConfigNodePinnedImageSetsProgressing), Status: metav1.ConditionFalse, Message: "All pinned image sets complete"},
		}}}
	got := machineConfigNodeEvidence(m)
	want := []string{
		"machineconfignode/worker-0: pool worker, desired rendered-worker-b",
		"machineconfignode/worker-0 condition PinnedImageSetsDegraded: PinnedImageSet s: image quay.io/x@sha256:1: not found in the registry",
		"machineconfignode/worker-0 conditions True: UpdatePrepared",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("evidence:\n%q\nwant\n%q", got, want)
	}
}
