package changeplan

import (
	"encoding/json"
	"maps"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/render"
)

// LastAppliedAnnotation is where `kubectl apply` keeps the manifest it last applied; its labels
// and annotations say which keys a new apply removes.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// OverlayMachineConfigs returns the cluster's MachineConfigs as `kubectl apply` of applied
// would leave them: a manifest replaces the spec of the object of its name (keeping its UID and
// owner references), new names are added after the cluster's. Neither input is modified.
func OverlayMachineConfigs(cluster, applied []*mcfgv1.MachineConfig) []*mcfgv1.MachineConfig {
	return overlay(cluster, applied, func(live, manifest *mcfgv1.MachineConfig) *mcfgv1.MachineConfig {
		out := manifest.DeepCopy()
		out.ObjectMeta = applyMeta(live.ObjectMeta, manifest.ObjectMeta)
		return out
	})
}

// OverlayPools is OverlayMachineConfigs for pools. spec.configuration and status stay the
// cluster's: the controller writes them, and a manifest that carries them (one saved with
// `kubectl get -o yaml`) does not move a pool's target.
func OverlayPools(cluster, applied []*mcfgv1.MachineConfigPool) []*mcfgv1.MachineConfigPool {
	return overlay(cluster, applied, func(live, manifest *mcfgv1.MachineConfigPool) *mcfgv1.MachineConfigPool {
		out := manifest.DeepCopy()
		out.ObjectMeta = applyMeta(live.ObjectMeta, manifest.ObjectMeta)
		out.Spec.Configuration = *live.Spec.Configuration.DeepCopy()
		out.Status = *live.Status.DeepCopy()
		return out
	})
}

type named interface{ GetName() string }

func overlay[T named](cluster, applied []T, replace func(live, manifest T) T) []T {
	byName := make(map[string]T, len(applied))
	for _, a := range applied {
		byName[a.GetName()] = a
	}
	out := make([]T, 0, len(cluster)+len(applied))
	seen := map[string]bool{}
	for _, live := range cluster {
		if a, ok := byName[live.GetName()]; ok {
			out = append(out, replace(live, a))
			seen[live.GetName()] = true
			continue
		}
		out = append(out, live)
	}
	for _, a := range applied {
		if !seen[a.GetName()] {
			out = append(out, a)
		}
	}
	return out
}

// applyMeta is the live object's metadata after an apply of manifest: the manifest's labels
// and annotations over the live ones, minus the keys the previous apply set and this one drops
// (kubectl's three-way merge of maps); everything else (UID, owner references) stays live.
func applyMeta(live, manifest metav1.ObjectMeta) metav1.ObjectMeta {
	out := *live.DeepCopy()
	var last struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	// An unreadable record is treated as none: only keys the manifest names are then touched.
	_ = json.Unmarshal([]byte(live.Annotations[LastAppliedAnnotation]), &last)
	out.Labels = mergeApplied(live.Labels, last.Metadata.Labels, manifest.Labels)
	out.Annotations = mergeApplied(live.Annotations, last.Metadata.Annotations, manifest.Annotations)
	return out
}

func mergeApplied(live, lastApplied, manifest map[string]string) map[string]string {
	out := maps.Clone(live)
	if out == nil {
		out = map[string]string{}
	}
	for k := range lastApplied {
		if _, kept := manifest[k]; !kept {
			delete(out, k)
		}
	}
	maps.Copy(out, manifest)
	if len(out) == 0 {
		return nil
	}
	return out
}

// Affected names the pools a change touches, sorted: those applied, and those that select an
// applied MachineConfig before or after the change (a relabelled MachineConfig leaves one pool
// and joins another). Selection is render.Select's, so rendered configs never count.
func Affected(before, after []*mcfgv1.MachineConfigPool, beforeMCs, afterMCs []*mcfgv1.MachineConfig, applied []*mcfgv1.MachineConfig, appliedPools []*mcfgv1.MachineConfigPool) []string {
	names := map[string]bool{}
	for _, mc := range applied {
		names[mc.Name] = true
	}
	out := map[string]bool{}
	for _, p := range appliedPools {
		out[p.Name] = true
	}
	for _, side := range []struct {
		pools []*mcfgv1.MachineConfigPool
		mcs   []*mcfgv1.MachineConfig
	}{{before, beforeMCs}, {after, afterMCs}} {
		for _, p := range side.pools {
			selected, err := render.Select(p, side.mcs)
			if err != nil {
				continue // a pool that selects nothing renders nothing; its render error is reported if it is applied
			}
			for _, mc := range selected {
				if names[mc.Name] {
					out[p.Name] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(out))
}
