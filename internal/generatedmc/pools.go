package generatedmc

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PoolSelector reads a generating object's machineConfigPoolSelector. nil, or one without
// terms, is a nil selector: it selects no pool, never every pool.
func PoolSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// SelectedPools returns the pools sel (from PoolSelector) matches, in the given order.
func SelectedPools(sel labels.Selector, pools []mcfgv1.MachineConfigPool) []*mcfgv1.MachineConfigPool {
	var out []*mcfgv1.MachineConfigPool
	for i := range pools {
		if sel != nil && sel.Matches(labels.Set(pools[i].Labels)) {
			out = append(out, &pools[i])
		}
	}
	return out
}

// Selects reports whether s selects pool; an invalid selector selects none.
func Selects(s *metav1.LabelSelector, pool *mcfgv1.MachineConfigPool) bool {
	sel, err := PoolSelector(s)
	return err == nil && sel != nil && sel.Matches(labels.Set(pool.Labels))
}
