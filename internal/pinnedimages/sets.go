package pinnedimages

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// RefsForPool are the sets pool has: those whose labels its machineConfigSelector matches
// (machineconfiguration.openshift.io/role: worker on a set puts it on the worker pool), by name,
// as OpenShift's controller writes spec.pinnedImageSets; nil when none. keep is false when the
// pool's selector is empty ({}: every MachineConfig), which OpenShift's controller leaves alone
// rather than give such a pool every set; err is a selector that does not parse.
func RefsForPool(pool *mcfgv1.MachineConfigPool, sets []mcfgv1.PinnedImageSet) (refs []mcfgv1.PinnedImageSetRef, keep bool, err error) {
	sel := pool.Spec.MachineConfigSelector
	if sel != nil && reflect.DeepEqual(*sel, metav1.LabelSelector{}) {
		return pool.Spec.PinnedImageSets, false, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, false, fmt.Errorf("spec.machineConfigSelector: %w", err)
	}
	for _, s := range sets {
		if s.DeletionTimestamp == nil && selector.Matches(labels.Set(s.Labels)) {
			refs = append(refs, mcfgv1.PinnedImageSetRef{Name: s.Name})
		}
	}
	slices.SortFunc(refs, func(a, b mcfgv1.PinnedImageSetRef) int { return strings.Compare(a.Name, b.Name) })
	return refs, true, nil
}

// Removed are the names in have that want drops: entries an admin wrote by hand into the pool's
// spec, which the controller replaces (as OpenShift's does) and names in an event.
func Removed(have, want []mcfgv1.PinnedImageSetRef) []string {
	var out []string
	for _, h := range have {
		if !slices.ContainsFunc(want, func(w mcfgv1.PinnedImageSetRef) bool { return w.Name == h.Name }) {
			out = append(out, h.Name)
		}
	}
	return out
}

// Set is one PinnedImageSet a node must hold: its name, generation and images (digest
// references, in the set's order).
type Set struct {
	Name       string
	Generation int64
	Images     []string
}

// Wanted are the sets the node's pools list, in the pools' order and each once. A set the pool
// names that does not exist (yet) is left out: the controller keeps the pool's list to the sets
// that exist.
func Wanted(pools []*mcfgv1.MachineConfigPool, sets []mcfgv1.PinnedImageSet) []Set {
	byName := map[string]*mcfgv1.PinnedImageSet{}
	for i := range sets {
		byName[sets[i].Name] = &sets[i]
	}
	var out []Set
	seen := map[string]bool{}
	for _, pool := range pools {
		for _, ref := range pool.Spec.PinnedImageSets {
			s := byName[ref.Name]
			if s == nil || seen[ref.Name] || s.DeletionTimestamp != nil {
				continue
			}
			seen[ref.Name] = true
			set := Set{Name: s.Name, Generation: s.Generation}
			for _, img := range s.Spec.PinnedImages {
				if name := strings.TrimSpace(string(img.Name)); name != "" && !slices.Contains(set.Images, name) {
					set.Images = append(set.Images, name)
				}
			}
			out = append(out, set)
		}
	}
	return out
}

// Images are every image of sets, each once, sorted: what the node pins.
func Images(sets []Set) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s.Images...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
