package render

import (
	"cmp"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mco-dev/mco/internal/protocol"
)

// References collects every rendered config name something still points at: any pool's target
// or status, and any node's current or desired config. Deleting one of those would strand a node
// (its agent could not read its config) or a new machine (the server could not serve it).
func References(pools []mcfgv1.MachineConfigPool, nodes []corev1.Node) sets.Set[string] {
	refs := sets.New[string]()
	for _, p := range pools {
		refs.Insert(p.Spec.Configuration.Name, p.Status.Configuration.Name)
	}
	for _, n := range nodes {
		refs.Insert(n.Annotations[protocol.CurrentConfigAnnotation], n.Annotations[protocol.DesiredConfigAnnotation])
	}
	refs.Delete("")
	return refs
}

// Garbage picks which of a pool's rendered configs to delete: everything beyond the newest keep,
// except what is referenced. Rendered configs are content-addressed, so a deleted one comes back
// under the same name if its content is ever rendered again.
func Garbage(owned []mcfgv1.MachineConfig, referenced sets.Set[string], keep int) []string {
	sorted := slices.Clone(owned)
	slices.SortFunc(sorted, func(a, b mcfgv1.MachineConfig) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	var out []string
	for i, mc := range sorted {
		if i < keep || referenced.Has(mc.Name) || mc.DeletionTimestamp != nil {
			continue
		}
		out = append(out, mc.Name)
	}
	return out
}
