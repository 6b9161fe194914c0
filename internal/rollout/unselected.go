package rollout

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// WhyNotSelected says why pool's nodeSelector does not match node: the first requirement the
// node's labels fail, in words ("" when it matches).
func WhyNotSelected(pool *mcfgv1.MachineConfigPool, node *corev1.Node) string {
	sel := nodeSelector(pool)
	if sel == nil {
		return fmt.Sprintf("mcp/%s has no nodeSelector, which selects no node", pool.Name)
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Matches(labels.Set(node.Labels)) {
			continue
		}
		key := r.Key()
		value, has := node.Labels[key]
		values := r.Values().List()
		var why string
		switch r.Operator() {
		case selection.Exists:
			why = "the node has no label " + key
		case selection.DoesNotExist:
			why = "the node has label " + key
		case selection.In, selection.Equals, selection.DoubleEquals:
			if !has {
				why = "the node has no label " + key
			} else {
				why = fmt.Sprintf("the node's %s is %q", key, value)
			}
		default:
			why = fmt.Sprintf("the node's %s is %q", key, value)
		}
		return fmt.Sprintf("mcp/%s selects %s: %s", pool.Name, describe(r, values), why)
	}
	return ""
}

func describe(r labels.Requirement, values []string) string {
	switch r.Operator() {
	case selection.Exists:
		return r.Key()
	case selection.DoesNotExist:
		return "no " + r.Key()
	case selection.In, selection.Equals, selection.DoubleEquals:
		if len(values) == 1 {
			return r.Key() + "=" + values[0]
		}
		return r.Key() + " in (" + strings.Join(values, ", ") + ")"
	default:
		return r.String()
	}
}

// NoPool says why no pool manages node, one reason per pool sorted by name ("" when a pool
// does): the reasons an admin reads to decide which label the node lacks.
func NoPool(node *corev1.Node, pools []*mcfgv1.MachineConfigPool) []string {
	if node.Labels[OSLabel] == "windows" {
		return []string{"it is a Windows node (" + OSLabel + "=windows): mco manages Linux nodes only"}
	}
	if primary, err := PrimaryPool(node, pools); primary != "" || err != nil {
		return nil
	}
	var why []string
	for _, p := range pools {
		if w := WhyNotSelected(p, node); w != "" {
			why = append(why, w)
		}
	}
	slices.Sort(why)
	return why
}
