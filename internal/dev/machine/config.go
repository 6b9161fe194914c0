package machine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mco-dev/mco/internal/dev/machine/metadata"
)

// Config describes one machine. It is stored as machine.json in the machine's directory.
type Config struct {
	Name string `json:"name"`
	// Dir is the machine's directory (absolute).
	Dir string `json:"dir"`
	// ImagesDir holds the OS image layers, one directory per image (osimage.DevImageDirName).
	ImagesDir string `json:"imagesDir"`
	// Image is the image the machine is first booted from (its boot image).
	Image string `json:"image"`
	// Provision is how the first boot fills the root: Ignition (the default) or a plain file set.
	Provision Provisioning `json:"provision,omitempty"`
	// Ignition is the Ignition client the first boot runs (as an initramfs would), with
	// UserDataFile; only for ProvisionIgnition.
	Ignition string `json:"ignition,omitempty"`
	// MCO is the mco binary; the boot stage re-executes it.
	MCO string `json:"mco"`
	// DiskSize of a new disk, in bytes (0: 1 GiB).
	DiskSize int64 `json:"diskSize"`
	// Hide lists host directories that must not be visible inside the machine (the dev
	// cluster's own state); an empty tmpfs covers each.
	Hide []string `json:"hide,omitempty"`
	// Metadata is what the machine's platform tells it (as a cloud metadata service would):
	// written to metadata.Path on every boot.
	Metadata metadata.Metadata `json:"metadata"`
	// Network, when set, gives the machine a network namespace of its own on every boot, with
	// this card in it; without it the machine shares the host's.
	Network *Network `json:"network,omitempty"`
}

// Paths inside the machine's directory and disk.
const (
	configFile   = "machine.json"
	diskFile     = "disk.img"
	UserDataFile = "user-data.ign"
	// FileSetFile is the file set of a machine provisioned with ProvisionFiles (WriteFileSet).
	FileSetFile = "first-boot-files.json"
	statusFile  = "status.json"
	ConsoleFile = "console.log"
	// DefaultCmdline is the command line of a machine whose OS never wrote one.
	DefaultCmdline = "BOOT_IMAGE=(mco-dev)/vmlinuz rw"
)

func (c Config) path(name string) string { return filepath.Join(c.Dir, name) }

// Save writes machine.json.
func (c Config) Save() error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	return writeAtomic(c.path(configFile), data, 0o644)
}

// Load reads the machine.json in dir.
func Load(dir string) (Config, error) {
	data, err := os.ReadFile(filepath.Join(dir, configFile))
	if err != nil {
		return Config{}, fmt.Errorf("no machine in %s: %w", dir, err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", filepath.Join(dir, configFile), err)
	}
	return c, nil
}

func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
