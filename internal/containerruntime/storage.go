package containerruntime

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/BurntSushi/toml"
	storageconfig "github.com/containers/storage/pkg/config"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// StorageConfPath is the containers/storage configuration CRI-O reads.
const StorageConfPath = "/etc/containers/storage.conf"

// DefaultStorageSource names the built-in default in messages.
const DefaultStorageSource = "the built-in default storage.conf"

// defaultStorageConf is the base for a pool none of whose MachineConfigs writes StorageConfPath:
// containers/storage's overlay defaults, the same settings OpenShift's template has, so an
// overlaySize gives the same file as on OpenShift (docs/generated-configs.md).
//
//go:embed default-storage.conf
var defaultStorageConf []byte

// DefaultStorageConf returns a copy of the built-in base storage.conf.
func DefaultStorageConf() []byte { return bytes.Clone(defaultStorageConf) }

// storageTOML is what OpenShift reads from the base and writes back: everything else in the
// base (comments, other tables) is dropped, as it is there. The options are containers/storage's
// own type, at the version OpenShift vendors, so the same keys come out in the same order.
type storageTOML struct {
	Storage struct {
		Driver    string                                `toml:"driver"`
		RunRoot   string                                `toml:"runroot"`
		GraphRoot string                                `toml:"graphroot"`
		Options   struct{ storageconfig.OptionsConfig } `toml:"options"`
	} `toml:"storage"`
}

// needsStorageConf: only a non-zero overlaySize changes storage.conf (additional stores would
// too, behind a feature gate that is off).
func needsStorageConf(c *mcfgv1.ContainerRuntimeConfiguration) bool {
	return c.OverlaySize != nil && !c.OverlaySize.IsZero()
}

// storageConf merges c's overlaySize into base.
func storageConf(base []byte, c *mcfgv1.ContainerRuntimeConfiguration) ([]byte, error) {
	var conf storageTOML
	if _, err := toml.NewDecoder(bytes.NewReader(base)).Decode(&conf); err != nil {
		return nil, fmt.Errorf("decoding the base storage.conf: %w", err)
	}
	if c.OverlaySize != nil && c.OverlaySize.Value() != 0 {
		conf.Storage.Options.Size = c.OverlaySize.String()
	}
	return encodeTOML(conf)
}
