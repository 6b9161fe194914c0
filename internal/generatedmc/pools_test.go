package generatedmc

import (
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A nil or term-less selector selects no pool (never every pool); an invalid one none either.
func TestPoolSelection(t *testing.T) {
	pools := []mcfgv1.MachineConfigPool{
		{ObjectMeta: metav1.ObjectMeta{Name: "master", Labels: map[string]string{"role": "master"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"role": "worker"}}},
	}
	for name, tc := range map[string]struct {
		sel  *metav1.LabelSelector
		want []string
	}{
		"nil":     {nil, nil},
		"empty":   {&metav1.LabelSelector{}, nil},
		"labels":  {&metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}, []string{"worker"}},
		"exists":  {&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpExists}}}, []string{"master", "worker"}},
		"invalid": {&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Bogus"}}}, nil},
	} {
		sel, err := PoolSelector(tc.sel)
		if (err != nil) != (name == "invalid") {
			t.Errorf("%s: error %v", name, err)
		}
		var got []string
		for _, p := range SelectedPools(sel, pools) {
			got = append(got, p.Name)
		}
		for i := range pools {
			if Selects(tc.sel, &pools[i]) != slices.Contains(tc.want, pools[i].Name) {
				t.Errorf("%s: Selects(%s) = %v", name, pools[i].Name, !slices.Contains(tc.want, pools[i].Name))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: selected %v, want %v", name, got, tc.want)
		}
	}
}
