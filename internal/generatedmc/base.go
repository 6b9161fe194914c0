package generatedmc

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// Base is the contents a generator starts from for one file of one pool, and where they came from.
type Base struct {
	// Source names the MachineConfig that provided Data, or the built-in default.
	Source string
	Data   []byte
}

// FindBase returns path as the pool's render would leave it without any generated
// MachineConfig (isGenerated): on OpenShift the template's 01-<role>-container-runtime or
// 00-<role>; elsewhere a MachineConfig the admin or installer provides. When none writes it,
// def, named defaultSource. A pool without a machineConfigSelector renders nothing, so it has
// def.
func FindBase(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig, path string, def []byte, defaultSource string) (Base, error) {
	selected, err := render.Select(pool, all)
	var noSelector *render.ErrNoSelector
	if errors.As(err, &noSelector) {
		// Such a pool renders nothing (it is RenderDegraded for it): no MachineConfig of its own.
		selected, err = nil, nil
	}
	if err != nil {
		return Base{}, err
	}
	return BaseSearch{Path: path, Default: def, DefaultSource: defaultSource, NotABase: isGenerated, Parse: parseWriting(path)}.In(selected)
}

// BaseSearch is how a generator finds the base of one file it writes; generators differ in
// which MachineConfigs may not be a base and in how MachineConfigs are read.
type BaseSearch struct {
	Path string
	// Default, named DefaultSource, is the base when no MachineConfig writes Path.
	Default       []byte
	DefaultSource string
	// NotABase reports the MachineConfigs never to take the base from: the generator's own
	// output at least, which would otherwise become its next base and compound on each sync.
	NotABase func(*mcfgv1.MachineConfig) bool
	// Parse reads a MachineConfig's Ignition config (an empty one for a MachineConfig that
	// cannot concern Path). Its error is returned as it is, so it names the MachineConfig.
	Parse func(*mcfgv1.MachineConfig) (ignition.Config, error)
}

// In returns Path as a render of selected (a pool's MachineConfigs, in merge order) would leave
// it without the MachineConfigs NotABase reports: from the last one that writes it with
// contents, else Default.
func (s BaseSearch) In(selected []*mcfgv1.MachineConfig) (Base, error) {
	var from *mcfgv1.MachineConfig
	var source, compression *string
	for _, mc := range selected {
		if s.NotABase(mc) {
			continue
		}
		cfg, err := s.Parse(mc)
		if err != nil {
			return Base{}, err
		}
		for _, l := range cfg.Storage.Links {
			if l.Path == s.Path {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.links: %s is a link; the base of a generated file must be a file", mc.Name, s.Path)
			}
		}
		for _, f := range cfg.Storage.Files {
			if f.Path != s.Path {
				continue
			}
			if len(f.Append) > 0 {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].append: appending to a generated file's base is not supported; replace its contents", mc.Name, s.Path)
			}
			// Ignition's merge keeps the earlier contents when a later entry has none.
			if f.Contents.Source != nil {
				from, source, compression = mc, f.Contents.Source, f.Contents.Compression
			}
		}
	}
	if from == nil {
		return Base{Source: s.DefaultSource, Data: bytes.Clone(s.Default)}, nil
	}
	data, err := inlineContents(*source, compression)
	if err != nil {
		return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].contents: %w", from.Name, s.Path, err)
	}
	return Base{Source: "MachineConfig " + from.Name, Data: data}, nil
}

// parseWriting parses only the MachineConfigs that write path: every selected config would
// otherwise be parsed on each sync. The API server stores spec.config as JSON it encoded
// itself, so a config writing path names it literally.
func parseWriting(path string) func(*mcfgv1.MachineConfig) (ignition.Config, error) {
	needle := []byte(path)
	return func(mc *mcfgv1.MachineConfig) (ignition.Config, error) {
		if !bytes.Contains(mc.Spec.Config.Raw, needle) {
			return ignition.Config{}, nil
		}
		cfg, err := ignition.Parse(mc.Spec.Config.Raw)
		if err != nil {
			return ignition.Config{}, fmt.Errorf("MachineConfig %s: spec.config: %w", mc.Name, err)
		}
		return cfg, nil
	}
}

// generatedOwners are the kinds whose controllers (OpenShift's and mco's) generate MachineConfigs.
var generatedOwners = map[string]bool{
	"ContainerRuntimeConfig":       true,
	"KubeletConfig":                true,
	"Image":                        true,
	"CRIOCredentialProviderConfig": true,
}

var generatedName = regexp.MustCompile(`^[0-9]{2}-(.+)-generated-`)

// isGenerated reports whether mc is some controller's generated MachineConfig: owned by a kind
// that generates them, or named NN-<its role>-generated-... as every one of them is.
func isGenerated(mc *mcfgv1.MachineConfig) bool {
	for _, ref := range mc.OwnerReferences {
		if generatedOwners[ref.Kind] {
			return true
		}
	}
	m := generatedName.FindStringSubmatch(mc.Name)
	return m != nil && m[1] == mc.Labels[protocol.RoleLabel]
}

// inlineContents decodes an inline Ignition source: controllers never fetch remote ones.
func inlineContents(source string, compression *string) ([]byte, error) {
	in, err := ignition.DecodeInline(source, compression, ignition.MaxConfigSize)
	if errors.Is(err, ignition.ErrNotInline) {
		return nil, fmt.Errorf("source %.40q is not inline (a data URL); the controller does not fetch remote contents", source)
	}
	return in.Data, err
}
