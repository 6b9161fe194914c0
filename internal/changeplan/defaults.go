package changeplan

import (
	"cmp"
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// InferDefaults recovers the OS images the render controller gives pools no admin
// MachineConfig overrides (its --os-image-url and --base-os-extensions-image, which a client
// cannot read): a pool's target rendered config carries them whenever none of the
// MachineConfigs it was rendered from set them (render's rule: controller-generated ones never
// do). Pools are tried in name order; notes say where each default came from, or that none
// could be found (the images then render empty, which shows as a change: the plan errs
// towards disruption rather than guess).
func InferDefaults(pools []*mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig) (render.Defaults, []string) {
	byName := make(map[string]*mcfgv1.MachineConfig, len(all))
	for _, mc := range all {
		byName[mc.Name] = mc
	}
	sorted := slices.Clone(pools)
	slices.SortFunc(sorted, func(a, b *mcfgv1.MachineConfigPool) int { return cmp.Compare(a.Name, b.Name) })
	var d render.Defaults
	var imageFrom, extensionsFrom string // "<rendered> (pool <name>)"
	for _, p := range sorted {
		target := byName[p.Spec.Configuration.Name]
		if target == nil {
			continue
		}
		image, extensions, ok := adminImages(p, byName)
		if !ok {
			continue // a source is gone: what the target was rendered from is unknown
		}
		from := fmt.Sprintf("%s (pool %s)", target.Name, p.Name)
		if imageFrom == "" && !image {
			d.OSImageURL, imageFrom = target.Spec.OSImageURL, from
		}
		if extensionsFrom == "" && !extensions {
			d.BaseOSExtensionsContainerImage, extensionsFrom = target.Spec.BaseOSExtensionsContainerImage, from
		}
	}
	var notes []string
	switch {
	case imageFrom != "" && imageFrom == extensionsFrom:
		notes = append(notes, fmt.Sprintf("default images (osImageURL %q, baseOSExtensionsContainerImage %q) taken from %s", d.OSImageURL, d.BaseOSExtensionsContainerImage, imageFrom))
	default:
		if imageFrom != "" {
			notes = append(notes, fmt.Sprintf("default osImageURL %q taken from %s", d.OSImageURL, imageFrom))
		}
		if extensionsFrom != "" {
			notes = append(notes, fmt.Sprintf("default baseOSExtensionsContainerImage %q taken from %s", d.BaseOSExtensionsContainerImage, extensionsFrom))
		}
	}
	if imageFrom == "" {
		notes = append(notes, "no pool's rendered config shows the controller's default osImageURL; pools that no MachineConfig gives one render without it")
	}
	if extensionsFrom == "" {
		notes = append(notes, "no pool's rendered config shows the controller's default baseOSExtensionsContainerImage; pools that no MachineConfig gives one render without it")
	}
	return d, notes
}

// adminImages says whether an admin MachineConfig among the sources of the pool's target sets
// the OS image or the extensions image; ok is false when a source no longer exists.
func adminImages(p *mcfgv1.MachineConfigPool, byName map[string]*mcfgv1.MachineConfig) (image, extensions, ok bool) {
	for _, src := range p.Spec.Configuration.Source {
		mc := byName[src.Name]
		if mc == nil {
			return false, false, false
		}
		if _, generated := mc.Annotations[protocol.GeneratedByControllerVersionAnnotation]; generated {
			continue
		}
		image = image || mc.Spec.OSImageURL != ""
		extensions = extensions || mc.Spec.BaseOSExtensionsContainerImage != ""
	}
	return image, extensions, len(p.Spec.Configuration.Source) > 0
}

// controllerVersion is the version stamped on the pool's target, which the render controller
// stamps again; it is not part of the rendered name.
func controllerVersion(target *mcfgv1.MachineConfig) string {
	if target == nil {
		return ""
	}
	return target.Annotations[protocol.GeneratedByControllerVersionAnnotation]
}
