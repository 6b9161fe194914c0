package changeplan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/render"
)

// LastAppliedAnnotation is where `kubectl apply` keeps the manifest it last applied: the fields
// it set, which a new apply removes when the new manifest drops them.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Manifests are the applied objects as their files wrote them, keyed by Key; an object without
// one is applied as it marshals (a Butane config's translation, which no file holds).
type Manifests map[string][]byte

// Key names an object in Manifests: "MachineConfig/50-a", "MachineConfigPool/infra".
func Key(kind, name string) string { return kind + "/" + name }

// OverlayMachineConfigs returns the cluster's MachineConfigs as `kubectl apply` of applied
// would leave them: an object of an applied name gets kubectl's three-way JSON merge of its
// previous apply (the last-applied annotation), the manifest and the live object, so fields
// the manifest leaves out stay as they are unless the previous apply set them; new names are
// added after the cluster's. Neither input is modified.
func OverlayMachineConfigs(cluster, applied []*mcfgv1.MachineConfig, manifests Manifests) ([]*mcfgv1.MachineConfig, error) {
	return overlay(cluster, applied, func(live, manifest *mcfgv1.MachineConfig) (*mcfgv1.MachineConfig, error) {
		out := &mcfgv1.MachineConfig{}
		return out, apply(live, manifest, manifests[Key("MachineConfig", manifest.Name)], out)
	})
}

// OverlayPools is OverlayMachineConfigs for pools. spec.configuration and status stay the
// cluster's: the controller writes them, and a manifest that carries them (one saved with
// `kubectl get -o yaml`) does not move a pool's target.
func OverlayPools(cluster, applied []*mcfgv1.MachineConfigPool, manifests Manifests) ([]*mcfgv1.MachineConfigPool, error) {
	return overlay(cluster, applied, func(live, manifest *mcfgv1.MachineConfigPool) (*mcfgv1.MachineConfigPool, error) {
		out := &mcfgv1.MachineConfigPool{}
		if err := apply(live, manifest, manifests[Key("MachineConfigPool", manifest.Name)], out); err != nil {
			return nil, err
		}
		out.Spec.Configuration = *live.Spec.Configuration.DeepCopy()
		out.Status = *live.Status.DeepCopy()
		return out, nil
	})
}

type named interface{ GetName() string }

func overlay[T named](cluster, applied []T, replace func(live, manifest T) (T, error)) ([]T, error) {
	byName := make(map[string]T, len(applied))
	for _, a := range applied {
		byName[a.GetName()] = a
	}
	out := make([]T, 0, len(cluster)+len(applied))
	seen := map[string]bool{}
	for _, live := range cluster {
		a, ok := byName[live.GetName()]
		if !ok {
			out = append(out, live)
			continue
		}
		merged, err := replace(live, a)
		if err != nil {
			return nil, err
		}
		out = append(out, merged)
		seen[live.GetName()] = true
	}
	for _, a := range applied {
		if !seen[a.GetName()] {
			out = append(out, a)
		}
	}
	return out, nil
}

// apply is kubectl apply's computation for a custom resource: a three-way JSON merge patch from
// the last applied configuration to the manifest, laid over the live object, into out.
func apply(live, manifest metav1.Object, written []byte, out any) error {
	current, err := json.Marshal(live)
	if err != nil {
		return err
	}
	modified := written
	if modified == nil {
		if modified, err = json.Marshal(manifest); err != nil {
			return err
		}
	}
	var original []byte
	if last := live.GetAnnotations()[LastAppliedAnnotation]; last != "" {
		original = []byte(last)
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	if err != nil {
		return fmt.Errorf("applying %s over the cluster's: %w", manifest.GetName(), err)
	}
	merged, err := jsonpatch.MergePatch(current, patch)
	if err != nil {
		return fmt.Errorf("applying %s over the cluster's: %w", manifest.GetName(), err)
	}
	if err := json.Unmarshal(merged, out); err != nil {
		return fmt.Errorf("applying %s over the cluster's: %w", manifest.GetName(), err)
	}
	return nil
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
