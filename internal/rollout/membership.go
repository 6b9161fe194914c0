package rollout

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mco-dev/mco/internal/protocol"
)

// OSLabel is the well-known node label naming its operating system; Windows nodes have no
// agent, so mco never manages them.
const OSLabel = "kubernetes.io/os"

// AmbiguousPoolError says a node is selected by more than one custom pool, so no pool manages
// it until an admin fixes the labels.
type AmbiguousPoolError struct {
	Node  string
	Pools []string
}

func (e *AmbiguousPoolError) Error() string {
	return fmt.Sprintf("node %s belongs to %d custom pools (%s); a node may be in at most one custom pool, so it is not managed",
		e.Node, len(e.Pools), strings.Join(e.Pools, ", "))
}

// builtIn pools may overlap with a custom pool: custom pools inherit worker, and master always
// wins (custom pools on control-plane nodes are unsupported).
func builtIn(pool string) bool {
	return pool == protocol.MasterPool || pool == protocol.WorkerPool || pool == protocol.ArbiterPool
}

// Selects reports whether the pool's nodeSelector matches the node. A nil or empty selector
// selects nothing: an accidental `{}` must not put every node of the cluster in one pool.
func Selects(pool *mcfgv1.MachineConfigPool, node *corev1.Node) bool {
	return matches(nodeSelector(pool), node)
}

// nodeSelector parses the pool's nodeSelector; nil when it selects nothing (nil, empty or invalid).
func nodeSelector(pool *mcfgv1.MachineConfigPool) labels.Selector {
	if pool.Spec.NodeSelector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(pool.Spec.NodeSelector)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

func matches(sel labels.Selector, node *corev1.Node) bool {
	return sel != nil && sel.Matches(labels.Set(node.Labels))
}

// Pools is a set of pools with their node selectors parsed, for deciding the pool of many
// nodes: parsing a selector costs more than matching it, and a reconcile matches every node
// against every pool.
type Pools struct {
	names     []string
	selectors []labels.Selector
}

// NewPools parses the selectors of pools once.
func NewPools(pools []*mcfgv1.MachineConfigPool) *Pools {
	ps := &Pools{names: make([]string, len(pools)), selectors: make([]labels.Selector, len(pools))}
	for i, p := range pools {
		ps.names[i], ps.selectors[i] = p.Name, nodeSelector(p)
	}
	return ps
}

// PrimaryPool names the one pool that manages node, or "" when none does. The rules, in order:
// Windows nodes are never managed; master wins over everything; two or more custom pools are
// an error (the node is left alone); one custom pool wins over worker; then worker, arbiter.
func PrimaryPool(node *corev1.Node, pools []*mcfgv1.MachineConfigPool) (string, error) {
	return NewPools(pools).PrimaryPool(node)
}

// PrimaryPool is the package's PrimaryPool over these pools.
func (ps *Pools) PrimaryPool(node *corev1.Node) (string, error) {
	if node.Labels[OSLabel] == "windows" {
		return "", nil
	}
	var matched, custom []string
	for i, name := range ps.names {
		if !matches(ps.selectors[i], node) {
			continue
		}
		matched = append(matched, name)
		if !builtIn(name) {
			custom = append(custom, name)
		}
	}
	switch {
	case slices.Contains(matched, protocol.MasterPool):
		return protocol.MasterPool, nil
	case len(custom) > 1:
		slices.Sort(custom)
		return "", &AmbiguousPoolError{Node: node.Name, Pools: custom}
	case len(custom) == 1:
		return custom[0], nil
	case slices.Contains(matched, protocol.WorkerPool):
		return protocol.WorkerPool, nil
	case slices.Contains(matched, protocol.ArbiterPool):
		return protocol.ArbiterPool, nil
	}
	return "", nil
}

// Members returns the managed nodes whose primary pool is pool, and the nodes that pool would
// share with another custom pool (so they are left unmanaged and reported).
func Members(pool *mcfgv1.MachineConfigPool, pools []*mcfgv1.MachineConfigPool, nodes []*corev1.Node) ([]*corev1.Node, []*AmbiguousPoolError) {
	members, _, ambiguous := Split(pool, pools, nodes)
	return members, ambiguous
}

// Split is Members, with the nodes whose primary pool is pool but which are not managed yet:
// joining, or waiting to be adopted (offered the pool's target, see adoption.go).
func Split(pool *mcfgv1.MachineConfigPool, pools []*mcfgv1.MachineConfigPool, nodes []*corev1.Node) (members, unmanaged []*corev1.Node, ambiguous []*AmbiguousPoolError) {
	parsed := NewPools(pools)
	for _, n := range nodes {
		primary, err := parsed.PrimaryPool(n)
		if amb, ok := err.(*AmbiguousPoolError); ok {
			if slices.Contains(amb.Pools, pool.Name) {
				ambiguous = append(ambiguous, amb)
			}
			continue
		}
		switch {
		case primary != pool.Name:
		case Managed(n):
			members = append(members, n)
		default:
			unmanaged = append(unmanaged, n)
		}
	}
	return members, unmanaged, ambiguous
}
