package render

import (
	"cmp"
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mco-dev/mco/internal/protocol"
)

// ErrNoSelector is returned for a pool whose machineConfigSelector is nil or selects everything:
// rendering every MachineConfig of every role into one pool is never what an admin meant.
type ErrNoSelector struct{ Pool string }

func (e *ErrNoSelector) Error() string {
	return fmt.Sprintf("pool %s: spec.machineConfigSelector is empty; refusing to select every MachineConfig", e.Pool)
}

// Select returns the MachineConfigs the pool's machineConfigSelector matches, in merge order.
// Rendered configs are never selected: they carry no role label, and one that has been given
// one by hand would feed a pool's output back into its input.
func Select(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig) ([]*mcfgv1.MachineConfig, error) {
	sel := pool.Spec.MachineConfigSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, &ErrNoSelector{Pool: pool.Name}
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, &Error{Field: "spec.machineConfigSelector", Reason: fmt.Sprintf("pool %s: %v", pool.Name, err)}
	}
	// A malformed nodeSelector would silently select no node at all; render is where a pool's
	// spec is first looked at, so it is reported here (RenderDegraded) rather than never.
	if ns := pool.Spec.NodeSelector; ns != nil {
		if _, err := metav1.LabelSelectorAsSelector(ns); err != nil {
			return nil, &Error{Field: "spec.nodeSelector", Reason: fmt.Sprintf("pool %s: %v", pool.Name, err)}
		}
	}
	var out []*mcfgv1.MachineConfig
	for _, mc := range all {
		if isRendered(mc) || !selector.Matches(labels.Set(mc.Labels)) {
			continue
		}
		out = append(out, mc)
	}
	Order(out)
	return out, nil
}

// Order sorts MachineConfigs into merge order in place: role=worker first, then all others,
// each group by name in byte order. So in a custom pool every MC of its own role overrides
// every inherited worker MC, whatever the names.
func Order(mcs []*mcfgv1.MachineConfig) {
	slices.SortStableFunc(mcs, func(a, b *mcfgv1.MachineConfig) int {
		aw, bw := a.Labels[protocol.RoleLabel] == protocol.WorkerPool, b.Labels[protocol.RoleLabel] == protocol.WorkerPool
		if aw != bw {
			if aw {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

func isRendered(mc *mcfgv1.MachineConfig) bool {
	for _, ref := range mc.OwnerReferences {
		if ref.Kind == "MachineConfigPool" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}
