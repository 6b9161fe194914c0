package statuspatch

import (
	"encoding/json"
	"reflect"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRequiredFieldsOfAPool(t *testing.T) {
	var got []string
	for _, f := range RequiredFields(reflect.TypeOf(mcfgv1.MachineConfigPoolStatus{})) {
		got = append(got, f.JSON)
	}
	// openshift/api at our pin declares these without omitempty.
	want := []string{"configuration", "machineCount", "updatedMachineCount", "readyMachineCount", "unavailableMachineCount",
		"degradedMachineCount", "conditions", "certExpirys"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("required fields %v, want %v", got, want)
	}
}

// A count that stays 0 is in the patch all the same, and a nil list goes as an empty one; a
// changed field keeps the merge patch's value, and the optimistic lock's resourceVersion stays.
func TestPatchCarriesTheRequiredFields(t *testing.T) {
	before := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", ResourceVersion: "7"}}
	after := before.DeepCopy()
	after.Status.MachineCount, after.Status.ReadyMachineCount = 3, 3
	data, err := MergeFrom(before).Data(after)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metadata map[string]any `json:"metadata"`
		Status   map[string]any `json:"status"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"machineCount": 3.0, "readyMachineCount": 3.0, "degradedMachineCount": 0.0,
		"unavailableMachineCount": 0.0, "updatedMachineCount": 0.0} {
		if doc.Status[k] != want {
			t.Errorf("status.%s = %v, want %v (patch %s)", k, doc.Status[k], want, data)
		}
	}
	for _, k := range []string{"conditions", "certExpirys"} {
		if l, ok := doc.Status[k].([]any); !ok || len(l) != 0 {
			t.Errorf("status.%s = %#v, want [] (patch %s)", k, doc.Status[k], data)
		}
	}
	if _, ok := doc.Status["configuration"].(map[string]any); !ok {
		t.Errorf("status.configuration missing (patch %s)", data)
	}
	if doc.Metadata["resourceVersion"] != "7" {
		t.Errorf("the optimistic lock's resourceVersion is gone: %s", data)
	}
}
