package bootimage

import (
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnrollment(t *testing.T) {
	machineSets := func(sel operatorv1.MachineManagerSelector) []operatorv1.MachineManager {
		return []operatorv1.MachineManager{{Resource: operatorv1.MachineSets, APIGroup: operatorv1.MachineAPI, Selection: sel}}
	}
	partial := func(ls *metav1.LabelSelector) operatorv1.MachineManagerSelector {
		return operatorv1.MachineManagerSelector{Mode: operatorv1.Partial, Partial: &operatorv1.PartialSelector{MachineResourceSelector: ls}}
	}
	gpu := map[string]string{"pool": "gpu"}
	plain := map[string]string{"pool": "general"}
	for _, tc := range []struct {
		name       string
		spec       operatorv1.ManagedBootImages
		gpu, plain bool
		wantErr    bool
		wantMode   operatorv1.MachineManagerSelectorMode
	}{
		{name: "absent list means the default, All", spec: operatorv1.ManagedBootImages{}, gpu: true, plain: true, wantMode: operatorv1.All},
		{name: "explicit empty list opts out", spec: operatorv1.ManagedBootImages{MachineManagers: []operatorv1.MachineManager{}}, wantMode: operatorv1.None},
		{name: "All", spec: operatorv1.ManagedBootImages{MachineManagers: machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.All})}, gpu: true, plain: true, wantMode: operatorv1.All},
		{name: "None", spec: operatorv1.ManagedBootImages{MachineManagers: machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.None})}, wantMode: operatorv1.None},
		{name: "Partial", spec: operatorv1.ManagedBootImages{MachineManagers: machineSets(partial(&metav1.LabelSelector{MatchLabels: gpu}))}, gpu: true, wantMode: operatorv1.Partial},
		{name: "Partial with expressions", spec: operatorv1.ManagedBootImages{MachineManagers: machineSets(partial(&metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"gpu"}}}}))}, plain: true, wantMode: operatorv1.Partial},
		{name: "Partial without selector", spec: operatorv1.ManagedBootImages{MachineManagers: machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.Partial})}, wantErr: true},
		{name: "only a control-plane entry", spec: operatorv1.ManagedBootImages{MachineManagers: []operatorv1.MachineManager{{
			Resource: operatorv1.ControlPlaneMachineSets, APIGroup: operatorv1.MachineAPI, Selection: operatorv1.MachineManagerSelector{Mode: operatorv1.All}}}}, wantMode: operatorv1.None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := MachineSetEnrollment(EffectiveMachineManagers(tc.spec))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if e.Mode != tc.wantMode || e.Enrolls(gpu) != tc.gpu || e.Enrolls(plain) != tc.plain {
				t.Errorf("mode %s gpu=%v plain=%v; want %s %v %v", e.Mode, e.Enrolls(gpu), e.Enrolls(plain), tc.wantMode, tc.gpu, tc.plain)
			}
		})
	}
}
