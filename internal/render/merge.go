package render

import (
	"reflect"

	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// mergeIgnition folds configs in order with Ignition's child-overrides-parent merge.
//
// Before merging, every file without a compression gets an explicit "" so that a later MC's
// uncompressed file replaces an earlier gzip-compressed one instead of inheriting "gzip" and
// corrupting the content; the markers are removed afterwards. Files without an overwrite get
// overwrite=true: MachineConfigs always own their paths, at first boot as on day 2.
func mergeIgnition(cfgs []ignition.Config) ignition.Config {
	merged := ignition.Empty()
	nodes, units := newStorageNodes(cfgs), newUnits(cfgs)
	for _, cfg := range cfgs {
		nodes.add(cfg.Storage)
		units.add(cfg.Systemd.Units)
		// The rest of the config is small: let the library merge it as it is. Most
		// MachineConfigs have nothing in it, and merging nothing is a copy of the parent
		// (TestMergingNothingIsACopy) that the library's merge, recording where every field came
		// from, made at a cost.
		cfg.Storage.Files, cfg.Storage.Directories, cfg.Storage.Links = nil, nil, nil
		cfg.Systemd.Units = nil
		if !holdsNothing(cfg) {
			merged = v3_5.Merge(merged, cfg)
		}
	}
	merged.Storage.Files = nodes.files.values()
	merged.Storage.Directories = nodes.dirs.values()
	merged.Storage.Links = nodes.links.values()
	merged.Systemd.Units = units.list.values()
	finishMerge(&merged)
	return merged
}

// holdsNothing: cfg is the empty canonical config, field for field; a list or pointer that is
// present but empty counts as something.
func holdsNothing(cfg ignition.Config) bool {
	if cfg.Ignition.Version != ignition.CanonicalVersion.String() {
		return false
	}
	cfg.Ignition.Version = ""
	return reflect.ValueOf(cfg).IsZero()
}

// finishMerge drops the compression markers and applies MCO's overwrite default.
func finishMerge(merged *ignition.Config) {
	merged.Ignition.Version = ignition.CanonicalVersion.String()
	files := merged.Storage.Files
	for i := range files {
		if c := files[i].Contents.Compression; c != nil && *c == "" {
			files[i].Contents.Compression = nil
		}
		if files[i].Overwrite == nil {
			files[i].Overwrite = ptr.To(true)
		}
	}
}

// noCompression is the "" compression put on files that have none while merging. It is never
// written through, and finishMerge removes it from every file.
var noCompression = ptr.To("")

// withCompressionMarker returns f with "" compression if it has none. f is a copy: the
// caller's (possibly cached) config is not modified.
func withCompressionMarker(f types.File) types.File {
	if f.Contents.Compression == nil {
		f.Contents.Compression = noCompression
	}
	return f
}

// mergeSpecFields combines the fields of MachineConfigSpec that Ignition does not carry.
func mergeSpecFields(mcs []*mcfgv1.MachineConfig, defaults Defaults) mcfgv1.MachineConfigSpec {
	spec := mcfgv1.MachineConfigSpec{
		OSImageURL:                     defaults.OSImageURL,
		BaseOSExtensionsContainerImage: defaults.BaseOSExtensionsContainerImage,
		KernelType:                     KernelTypeDefault,
	}
	for _, mc := range mcs {
		s := mc.Spec
		spec.FIPS = spec.FIPS || s.FIPS
		spec.KernelArguments = append(spec.KernelArguments, s.KernelArguments...)
		spec.Extensions = append(spec.Extensions, s.Extensions...)
		if s.KernelType != "" && s.KernelType != KernelTypeDefault {
			spec.KernelType = s.KernelType
		}
		// Controller-generated MCs describe the release, not the admin's intent: only an
		// admin's MC may move a pool off the default OS image.
		if _, generated := mc.Annotations[protocol.GeneratedByControllerVersionAnnotation]; generated {
			continue
		}
		if s.OSImageURL != "" {
			spec.OSImageURL = s.OSImageURL
		}
		if s.BaseOSExtensionsContainerImage != "" {
			spec.BaseOSExtensionsContainerImage = s.BaseOSExtensionsContainerImage
		}
	}
	return spec
}
