package osimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// The dev cluster's machines (internal/dev/machine) have OS images without ostree: the machine's
// supervisor plays firmware and boot loader. These paths, inside the machine's root, are the
// contract between it and DevImage.
const (
	// DevBootedImagePath is written by the supervisor at each boot: the booted image
	// reference, one line.
	DevBootedImagePath = "/run/mco-dev/booted-image"
	// DevStagedImagePath is written by the backend: the image to boot next. The supervisor
	// consumes (removes) it at the next boot.
	DevStagedImagePath = "/boot/mco-dev/staged-image"
	// DevRegistryPath is a read-only directory of the images a machine can boot, one
	// subdirectory per image named DevImageDirName(ref).
	DevRegistryPath = "/run/mco-dev/images"
)

// DevImageDirName is the directory name of an image reference in the dev registry: a single
// safe path component. Every byte outside [A-Za-z0-9.-] becomes '_' and its two hex digits
// ('_' itself included), so distinct references get distinct names; "", "." and ".." are
// escaped whole, and a name longer than 200 bytes is cut and suffixed with a SHA-256.
func DevImageDirName(ref string) string {
	var b strings.Builder
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	name := b.String()
	switch name {
	case "":
		return "_"
	case ".", "..":
		return strings.Repeat("_2e", len(name))
	}
	if len(name) > 200 {
		sum := sha256.Sum256([]byte(ref))
		name = name[:135] + "_" + hex.EncodeToString(sum[:])
	}
	return name
}

// DevImage is a dev-cluster machine: it "pulls" an image by finding it in the dev registry
// and stages it for the supervisor; kernel arguments go to /etc/kernel/cmdline, which the
// supervisor boots with, through the package backend's kernel-install flavor.
type DevImage struct {
	Root  string
	Kargs *Package
}

// NewDevImage returns the dev backend for a machine root.
func NewDevImage(root string, run systemd.Runner) *DevImage {
	kargs := NewPackage(root, KernelInstall, run)
	// A dev machine shares the host's kernel: its firmware presents the command line it booted
	// with over the machine's own /proc/cmdline. An agent in a pod has a /proc of its own, which
	// shows the host kernel's; the machine's is under its root.
	kargs.Kernel.CmdlinePath = filepath.Join(root, ProcCmdline)
	return &DevImage{Root: root, Kargs: kargs}
}

func (d *DevImage) Name() string { return d.Kargs.Name() + " + dev image" }

func (d *DevImage) Supports(field string) bool {
	return field == FieldOSImageURL || d.Kargs.Supports(field)
}

func (d *DevImage) Stage(ctx context.Context, c Change) error {
	if c.KernelTypeChanged || c.ExtensionsChanged {
		return fmt.Errorf("the dev image backend cannot switch kernels or install extensions")
	}
	if c.OSImageURL != "" {
		if err := d.stageImage(c.OSImageURL); err != nil {
			return err
		}
	}
	if c.KernelArgs {
		return d.Kargs.Stage(ctx, Change{KernelArgs: true, OldKernelArgs: c.OldKernelArgs, NewKernelArgs: c.NewKernelArgs})
	}
	return nil
}

func (d *DevImage) stageImage(ref string) error {
	r, err := noderoot.Open(d.Root)
	if err != nil {
		return err
	}
	defer r.Close()
	info, err := r.Lstat(path.Join(DevRegistryPath, DevImageDirName(ref)))
	if err != nil {
		return err
	}
	if info.Type != noderoot.Directory {
		return fmt.Errorf("image %q not found in the dev registry (%s)", ref, DevRegistryPath)
	}
	if _, err := r.MkdirAll(path.Dir(DevStagedImagePath), noderoot.DefaultDir); err != nil {
		return err
	}
	return r.WriteFile(DevStagedImagePath, []byte(ref+"\n"), noderoot.WriteOptions{Perm: 0o644})
}

// Discard removes the staged image and undoes a staged command line.
func (d *DevImage) Discard(ctx context.Context) error {
	r, err := noderoot.Open(d.Root)
	if err != nil {
		return err
	}
	err = r.Remove(DevStagedImagePath, false)
	r.Close()
	return errors.Join(err, d.Kargs.Discard(ctx))
}

// Booted is the image the supervisor booted and the kernel's command line.
func (d *DevImage) Booted(ctx context.Context) (Booted, error) {
	b, err := d.Kargs.Booted(ctx)
	if err != nil {
		return Booted{}, err
	}
	r, err := noderoot.Open(d.Root)
	if err != nil {
		return Booted{}, err
	}
	defer r.Close()
	data, err := r.ReadFile(DevBootedImagePath)
	if err != nil {
		return Booted{}, fmt.Errorf("reading the booted dev image: %w", err)
	}
	b.Image = strings.TrimSpace(string(data))
	return b, nil
}
