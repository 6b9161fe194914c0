package hostile

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/render"
)

// selectorCases give malformed label selectors to the code that parses them: a pool's
// machineConfigSelector and nodeSelector (render.Select, which every render starts with) and the boot image
// enrollment of MachineConfiguration cluster.
func selectorCases() []hostileCase {
	pools := []struct {
		name   string
		sel    metav1.LabelSelector
		reason string
	}{
		{"unknown operator", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Matches", Values: []string{"worker"}}}}, `"Matches" is not a valid label selector operator`},
		{"In without values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn}}}, "values set can't be empty"},
		{"Exists with values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpExists, Values: []string{"x"}}}}, "values set must be empty"},
		{"invalid label key", metav1.LabelSelector{MatchLabels: map[string]string{"role worker!": "x"}}, "name part must consist of alphanumeric characters"},
		{"invalid label value", metav1.LabelSelector{MatchLabels: map[string]string{"role": "../../etc"}}, "a valid label must be an empty string or consist of alphanumeric characters"},
	}
	var cases []hostileCase
	for _, p := range pools {
		cases = append(cases, hostileCase{
			entry: "render.Select", name: p.name,
			want: []string{"pool hostile-selector", "spec.machineConfigSelector", p.reason},
			run: func(t *testing.T) error {
				pool := testPool("hostile-selector")
				pool.Spec.MachineConfigSelector = &p.sel
				selected, err := render.Select(pool, []*mcfgv1.MachineConfig{machineConfig("00-hostile-selector", "worker", baseConfig)})
				if len(selected) > 0 {
					t.Errorf("a malformed selector selected %d MachineConfigs", len(selected))
				}
				return err
			},
		})
	}
	cases = append(cases, hostileCase{
		entry: "render.Select", name: "malformed nodeSelector",
		want: []string{"pool hostile-selector", "spec.nodeSelector", `"Near" is not a valid label selector operator`},
		run: func(t *testing.T) error {
			pool := testPool("hostile-selector")
			pool.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "node-role.kubernetes.io/worker", Operator: "Near"}}}
			selected, err := render.Select(pool, []*mcfgv1.MachineConfig{machineConfig("00-hostile-selector", "worker", baseConfig)})
			if len(selected) > 0 {
				t.Errorf("a pool with a malformed nodeSelector selected %d MachineConfigs", len(selected))
			}
			return err
		},
	})
	cases = append(cases, hostileCase{
		entry: "bootimage.MachineSetEnrollment", name: "malformed Partial selector",
		want: []string{"spec.managedBootImages.machineManagers.1.selection.partial.machineResourceSelector", `"Bogus" is not a valid label selector operator`},
		run: func(t *testing.T) error {
			managers := []operatorv1.MachineManager{
				{Resource: "controlplanemachinesets", APIGroup: operatorv1.MachineAPI, Selection: operatorv1.MachineManagerSelector{Mode: operatorv1.All}},
				{Resource: operatorv1.MachineSets, APIGroup: operatorv1.MachineAPI, Selection: operatorv1.MachineManagerSelector{
					Mode: operatorv1.Partial, Partial: &operatorv1.PartialSelector{MachineResourceSelector: &metav1.LabelSelector{
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}}},
			}
			e, err := bootimage.MachineSetEnrollment(managers)
			if e.Enrolls(map[string]string{"a": "b"}) {
				t.Error("a malformed selector enrolled a MachineSet")
			}
			return err
		},
	})
	return cases
}
