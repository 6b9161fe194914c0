package generatedmc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"

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
// MachineConfig: from the last MachineConfig in merge order that writes it with contents,
// leaving out every generated one (a generator's own output would otherwise become its next
// base and compound on each sync). On OpenShift that is the template's 01-<role>-container-runtime
// or 00-<role>; elsewhere a MachineConfig the admin or installer provides. When none writes it,
// def, named defaultSource.
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
	needle := []byte(path)
	var from *mcfgv1.MachineConfig
	var source, compression *string
	for _, mc := range selected {
		// Every selected config would otherwise be parsed on each sync; the API server stores
		// spec.config as JSON it encoded itself, so a config writing path names it literally.
		if IsGenerated(mc) || !bytes.Contains(mc.Spec.Config.Raw, needle) {
			continue
		}
		cfg, err := ignition.Parse(mc.Spec.Config.Raw)
		if err != nil {
			return Base{}, fmt.Errorf("MachineConfig %s: spec.config: %w", mc.Name, err)
		}
		for _, l := range cfg.Storage.Links {
			if l.Path == path {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.links: %s is a link; the base of a generated file must be a file", mc.Name, path)
			}
		}
		for _, f := range cfg.Storage.Files {
			if f.Path != path {
				continue
			}
			if len(f.Append) > 0 {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].append: appending to a generated file's base is not supported; replace its contents", mc.Name, path)
			}
			// Ignition's merge keeps the earlier contents when a later entry has none.
			if f.Contents.Source != nil {
				from, source, compression = mc, f.Contents.Source, f.Contents.Compression
			}
		}
	}
	if from == nil {
		return Base{Source: defaultSource, Data: bytes.Clone(def)}, nil
	}
	data, err := inlineContents(*source, compression)
	if err != nil {
		return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].contents: %w", from.Name, path, err)
	}
	return Base{Source: "MachineConfig " + from.Name, Data: data}, nil
}

// generatedOwners are the kinds whose controllers (OpenShift's and mco's) generate MachineConfigs.
var generatedOwners = map[string]bool{
	"ContainerRuntimeConfig":       true,
	"KubeletConfig":                true,
	"Image":                        true,
	"CRIOCredentialProviderConfig": true,
}

var generatedName = regexp.MustCompile(`^[0-9]{2}-(.+)-generated-`)

// IsGenerated reports whether mc is some controller's generated MachineConfig: owned by a kind
// that generates them, or named NN-<its role>-generated-... as every one of them is.
func IsGenerated(mc *mcfgv1.MachineConfig) bool {
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
	if !strings.HasPrefix(source, "data:") {
		return nil, fmt.Errorf("source %.40q is not inline (a data URL); the controller does not fetch remote contents", source)
	}
	url, err := dataurl.DecodeString(source)
	if err != nil {
		return nil, fmt.Errorf("decoding the data URL: %w", err)
	}
	if compression == nil || *compression == "" {
		return url.Data, nil
	}
	if *compression != "gzip" {
		return nil, fmt.Errorf("unsupported compression %q", *compression)
	}
	r, err := gzip.NewReader(bytes.NewReader(url.Data))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, ignition.MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	if len(data) > ignition.MaxConfigSize {
		return nil, fmt.Errorf("decompresses to more than %d bytes", ignition.MaxConfigSize)
	}
	return data, nil
}
