package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// Provisioning is how a machine's first boot fills its root before systemd starts.
type Provisioning string

const (
	// ProvisionIgnition runs the real Ignition client with the machine's user data
	// (UserDataFile), as a cloud machine's initramfs does. The default.
	ProvisionIgnition Provisioning = "ignition"
	// ProvisionFiles writes the machine's file set (FileSetFile), as a distribution's installer
	// or image builder (kickstart, cloud-init's write_files, a prepared disk) leaves a disk:
	// nothing is fetched and nothing of Ignition runs.
	ProvisionFiles Provisioning = "files"
)

// FileSet is what a machine provisioned with ProvisionFiles finds on its disk at its first
// boot, besides its OS image: directories (made first, so an empty one can be part of it) and
// files, owned by root. A path the image has already is replaced.
type FileSet struct {
	Dirs  []Dir  `json:"dirs,omitempty"`
	Files []File `json:"files,omitempty"`
}

// Dir is one directory of a FileSet.
type Dir struct {
	Path string      `json:"path"`
	Mode os.FileMode `json:"mode"`
}

// File is one file of a FileSet.
type File struct {
	Path    string      `json:"path"`
	Mode    os.FileMode `json:"mode"`
	Content string      `json:"content"`
}

// Validate refuses a path that is not absolute and clean, or "/", and a mode beyond permission
// bits, naming the entry.
func (s FileSet) Validate() error {
	check := func(field, p string, mode os.FileMode) error {
		if p == "" || p == "/" || !path.IsAbs(p) || path.Clean(p) != p {
			return fmt.Errorf("file set: %s: path %q must be absolute and clean, and not /", field, p)
		}
		if mode&^os.ModePerm != 0 {
			return fmt.Errorf("file set: %s (%s): mode %#o has bits beyond the permissions", field, p, uint32(mode))
		}
		return nil
	}
	var errs []error
	for i, d := range s.Dirs {
		errs = append(errs, check(fmt.Sprintf("dirs[%d]", i), d.Path, d.Mode))
	}
	for i, f := range s.Files {
		errs = append(errs, check(fmt.Sprintf("files[%d]", i), f.Path, f.Mode))
	}
	return errors.Join(errs...)
}

// WriteFileSet stores set as the file set of the machine in dir, for its first boot.
func WriteFileSet(dir string, set FileSet) error {
	if err := set.Validate(); err != nil {
		return fmt.Errorf("machine in %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Bootstrap credentials may be among the files: readable by root only, as user data.
	return writeAtomic(filepath.Join(dir, FileSetFile), data, 0o600)
}

// readFileSet reads the machine's file set.
func (c Config) readFileSet() (FileSet, error) {
	var set FileSet
	data, err := os.ReadFile(c.path(FileSetFile))
	if err != nil {
		return set, fmt.Errorf("file set: %w", err)
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return set, fmt.Errorf("%s: %w", c.path(FileSetFile), err)
	}
	return set, set.Validate()
}

// writeTo writes the set into the root mounted at root, resolving every path inside it as the
// machine will (an absolute symlink of the image points into the machine, never at this host).
func (s FileSet) writeTo(root string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	r, err := noderoot.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, d := range s.Dirs {
		if _, err := r.MkdirAll(d.Path, noderoot.DirSpec{Perm: uint32(d.Mode)}); err != nil {
			return fmt.Errorf("file set: %s: %w", d.Path, err)
		}
	}
	for _, f := range s.Files {
		if _, err := r.MkdirAll(path.Dir(f.Path), noderoot.DefaultDir); err != nil {
			return fmt.Errorf("file set: %s: %w", f.Path, err)
		}
		if err := r.WriteFile(f.Path, []byte(f.Content), noderoot.WriteOptions{Perm: uint32(f.Mode)}); err != nil {
			return fmt.Errorf("file set: %w", err)
		}
	}
	return nil
}
