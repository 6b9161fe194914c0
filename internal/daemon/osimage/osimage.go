// Package osimage changes what a node boots: OS image, kernel arguments, kernel type and
// extensions. Each host has one Backend, found by Detect: rpm-ostree, bootc, the package
// backend of a traditional distribution (kernel arguments through kernel-install or GRUB),
// the dev cluster's image backend, or None.
//
// The agent never applies a field its backend cannot: Refuse names it before anything is
// written. And it never reports a config as in effect on the word of what it staged: Verify
// compares the config with what the running system booted (Backend.Booted).
package osimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// The MachineConfigSpec fields an OS backend applies, in the order Refuse checks them.
const (
	FieldOSImageURL      = "osImageURL"
	FieldKernelArguments = "kernelArguments"
	FieldExtensions      = "extensions"
	FieldKernelType      = "kernelType"
	FieldFIPS            = "fips"
)

// Kernel types (MachineConfigSpec.KernelType; "" is KernelTypeDefault).
const (
	KernelTypeDefault  = "default"
	KernelTypeRealtime = "realtime"
	KernelType64kPages = "64k-pages"
)

// Change is what a backend is asked to stage for the next boot.
type Change struct {
	OSImageURL string // empty: keep
	KernelArgs bool   // kernel arguments changed
	// OldKernelArgs are removed (every occurrence, where present), then NewKernelArgs are
	// appended; one argument per element. Old holds every argument mco put there before, so a
	// backend needs no memory of its own; an argument in both ends up exactly once.
	OldKernelArgs, NewKernelArgs []string
	// KernelType is the canonical kernel type to boot ("default", "realtime", "64k-pages").
	// It is meaningful when KernelTypeChanged; ChangeBetween and Needed always fill it, so a
	// backend that has to redo a kernel switch (an OS image change) knows the target.
	KernelType        string
	KernelTypeChanged bool
	// NewExtensions is the whole wanted set; backends compare it with what is installed.
	OldExtensions, NewExtensions []string
	ExtensionsChanged            bool
}

// Empty reports whether there is nothing to stage.
func (c Change) Empty() bool {
	return c.OSImageURL == "" && !c.KernelArgs && !c.KernelTypeChanged && !c.ExtensionsChanged
}

// Booted is what the running system booted, as the backend and the kernel report it.
type Booted struct {
	// KernelArgs is the booted kernel command line split on spaces (quotes respected); nil is
	// unknown.
	KernelArgs []string
	// Image is the booted OS image reference; "" when this backend has no image concept.
	Image string
	// KernelType is the booted kernel type; "" when unknown.
	KernelType string
	// Extensions are the extensions the booted deployment has; nil when this backend has no
	// extensions (none can be in effect).
	Extensions []string
	// FIPS: the kernel runs in FIPS mode (/proc/sys/crypto/fips_enabled).
	FIPS bool
}

// Backend stages OS changes; they take effect at the next boot.
type Backend interface {
	// Name says which backend, as the Node's reason shows it.
	Name() string
	// Supports reports whether the backend can apply the field (the Field constants).
	Supports(field string) bool
	// Stage prepares c for the next boot.
	Stage(ctx context.Context, c Change) error
	// Discard drops whatever is staged (rollback): the next boot is the booted system again.
	Discard(ctx context.Context) error
	// Booted reports what the running system booted.
	Booted(ctx context.Context) (Booted, error)
}

// Paths the agent checks in the root to detect the backend.
const (
	ostreeBootedPath  = "/run/ostree-booted"
	rpmOSTreePath     = "/usr/bin/rpm-ostree"
	bootcPath         = "/usr/bin/bootc"
	kernelInstallPath = "/usr/bin/kernel-install"
	updateGrubPath    = "/usr/sbin/update-grub"
)

// Detect picks the backend the root has: an ostree-booted host with rpm-ostree, else one with
// bootc; a dev-cluster machine (DevBootedImagePath); else a traditional distribution whose
// boot tooling takes kernel arguments (kernel-install or GRUB); else None.
func Detect(root string, exists func(string) bool, run systemd.Runner) Backend {
	ostreeBooted := exists(ostreeBootedPath)
	switch {
	case ostreeBooted && exists(rpmOSTreePath):
		return NewRPMOSTree(root, run)
	case ostreeBooted && exists(bootcPath):
		return NewBootc(root, run)
	case exists(DevBootedImagePath):
		return NewDevImage(root, run)
	}
	if p := detectPackage(root, exists, run); p != nil {
		return p
	}
	return None{}
}

// detectPackage finds how a traditional distribution sets the kernel command line.
// kernel-install first when /etc/kernel/cmdline exists or the boot loader reads Boot Loader
// Spec entries from /boot/loader/entries (Fedora and RHEL, even with GRUB: their kernel-install
// plugin writes the entries' options from /etc/kernel/cmdline, while grub2-mkconfig leaves
// existing entries alone); else GRUB with /etc/default/grub (Debian and Ubuntu); else
// kernel-install when it is installed.
func detectPackage(root string, exists func(string) bool, run systemd.Runner) *Package {
	hasKernelInstall := exists(kernelInstallPath)
	switch {
	case exists(KernelCmdlinePath), hasKernelInstall && exists(loaderEntriesPath):
		return NewPackage(root, KernelInstall, run)
	case exists(grubDefaultsPath):
		p := NewPackage(root, Grub, run)
		if !exists(updateGrubPath) {
			p.GrubCommand = []string{"grub2-mkconfig", "-o", "/boot/grub2/grub.cfg"}
		}
		return p
	case hasKernelInstall:
		return NewPackage(root, KernelInstall, run)
	}
	return nil
}

// Where the running kernel reports itself. These are the kernel's, not the root's: an agent in
// a pod with the host at /rootfs shares the host's kernel, and /proc is not under the root.
const (
	ProcCmdline       = "/proc/cmdline"
	ProcFIPSEnabled   = "/proc/sys/crypto/fips_enabled"
	ProcKernelRelease = "/proc/sys/kernel/osrelease"
)

// Kernel says where to read what the running kernel reports; empty fields are the /proc files.
type Kernel struct {
	CmdlinePath, FIPSPath, ReleasePath string
}

func orDefault(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// Cmdline reads the booted kernel command line.
func (k Kernel) Cmdline() ([]string, error) {
	data, err := os.ReadFile(orDefault(k.CmdlinePath, ProcCmdline))
	if err != nil {
		return nil, fmt.Errorf("reading the kernel command line: %w", err)
	}
	return ParseCmdline(string(data)), nil
}

// FIPS reports whether the kernel runs in FIPS mode; a kernel without the file does not.
func (k Kernel) FIPS() bool {
	data, err := os.ReadFile(orDefault(k.FIPSPath, ProcFIPSEnabled))
	return err == nil && strings.TrimSpace(string(data)) == "1"
}

// Release is the running kernel's release (uname -r).
func (k Kernel) Release() (string, error) {
	data, err := os.ReadFile(orDefault(k.ReleasePath, ProcKernelRelease))
	if err != nil {
		return "", fmt.Errorf("reading the kernel release: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// booted is what every backend reports from the kernel itself.
func (k Kernel) booted() (Booted, error) {
	args, err := k.Cmdline()
	if err != nil {
		return Booted{}, err
	}
	return Booted{KernelArgs: args, FIPS: k.FIPS()}, nil
}

// runner runs the node's commands: directly on the host, chrooted into the root otherwise.
type runner struct {
	root string
	run  systemd.Runner
}

func chrooted(root string, run systemd.Runner) runner { return runner{root: root, run: run} }

// output runs the command and returns its output; the error names the command and carries the
// output, which is where these tools say why.
func (r runner) output(ctx context.Context, name string, args ...string) ([]byte, error) {
	if r.root != "" && path.Clean(r.root) != "/" {
		args = append([]string{r.root, name}, args...)
		name = "chroot"
	}
	run := r.run
	if run == nil {
		run = systemd.ExecRunner
	}
	out, err := run(ctx, name, args...)
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

func (r runner) cmd(ctx context.Context, name string, args ...string) error {
	_, err := r.output(ctx, name, args...)
	return err
}

// jsonOf returns the JSON document in a tool's output: the runner merges stderr, where a
// warning may precede it.
func jsonOf(out []byte) []byte {
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		return out[i:]
	}
	return out
}

// None is a host whose OS cannot be changed by the agent: only files, units and keys.
type None struct {
	Kernel Kernel
}

func (None) Name() string         { return "none" }
func (None) Supports(string) bool { return false }
func (None) Stage(_ context.Context, c Change) error {
	if c.Empty() {
		return nil
	}
	return fmt.Errorf("no OS backend on this host")
}
func (None) Discard(context.Context) error { return nil }

// Booted reports the kernel command line: a config's kernel arguments can still be in effect
// (set when the host was installed).
func (n None) Booted(context.Context) (Booted, error) { return n.Kernel.booted() }
