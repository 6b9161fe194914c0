package osimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// PackageFlavor is how a traditional distribution sets the kernel command line.
type PackageFlavor string

const (
	// KernelInstall: /etc/kernel/cmdline holds the whole command line; kernel-install writes
	// it into the Boot Loader Spec entries (Fedora, RHEL, systemd-boot hosts).
	KernelInstall PackageFlavor = "kernel-install"
	// Grub: GRUB_CMDLINE_LINUX in /etc/default/grub, extended by a drop-in, and grub.cfg
	// regenerated (Debian, Ubuntu).
	Grub PackageFlavor = "grub"
)

// Files the package backend reads and writes, inside the root.
const (
	KernelCmdlinePath = "/etc/kernel/cmdline"
	GrubDropInPath    = "/etc/default/grub.d/50-mco-kernel-args.cfg"
	grubDefaultsPath  = "/etc/default/grub"
	loaderEntriesPath = "/boot/loader/entries"
	// PackageStagedPath records what the last Stage replaced, so a restarted agent can still
	// discard it. It lives in /run: a staging is discardable until the next boot, and /run is
	// emptied by every boot, so a record never outlives the staging it undoes.
	PackageStagedPath = "/run/mco/staged-kernel-args.json"
)

// Package is a host without an image-based OS (Debian, Ubuntu, Fedora without ostree): only
// kernel arguments, written where the host's boot tooling reads them. Create it with NewPackage.
type Package struct {
	Root   string
	Flavor PackageFlavor
	// GrubCommand regenerates grub.cfg (Grub flavor); update-grub by default, grub2-mkconfig
	// on Fedora-like hosts.
	GrubCommand []string
	Kernel      Kernel
	cmd         runner
	// staged is what the last Stage replaced, also kept on disk at PackageStagedPath.
	staged *packageStaged
}

// packageStaged is the file a Stage replaced: its content before, or that it did not exist.
type packageStaged struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	Content string `json:"content,omitempty"`
}

// NewPackage returns the package backend for a root.
func NewPackage(root string, flavor PackageFlavor, run systemd.Runner) *Package {
	return &Package{Root: root, Flavor: flavor, GrubCommand: []string{"update-grub"}, cmd: chrooted(root, run)}
}

func (p *Package) Name() string { return "package (" + string(p.Flavor) + ")" }

func (p *Package) Supports(field string) bool { return field == FieldKernelArguments }

// Stage removes every occurrence of each old argument and appends the new ones, in the file
// the flavor uses, then regenerates the boot loader entries.
func (p *Package) Stage(ctx context.Context, c Change) error {
	if c.OSImageURL != "" || c.KernelTypeChanged || c.ExtensionsChanged {
		return fmt.Errorf("OS backend %q can only change kernel arguments", p.Name())
	}
	if !c.KernelArgs {
		return nil
	}
	r, err := noderoot.Open(p.Root)
	if err != nil {
		return err
	}
	defer r.Close()
	file := p.file()
	prior, err := readOptional(r, file)
	if err != nil {
		return err
	}
	var args []string
	switch {
	case p.Flavor == Grub:
		if args, err = parseGrubDropIn(prior.Content); err != nil {
			return err
		}
	case prior.Existed:
		args = ParseCmdline(prior.Content)
	default:
		// No /etc/kernel/cmdline: kernel-install falls back to /proc/cmdline, so the file
		// starts as what booted, without what the boot loader added itself.
		booted, err := p.Kernel.Cmdline()
		if err != nil {
			return err
		}
		for _, a := range booted {
			if !strings.HasPrefix(a, "BOOT_IMAGE=") && !strings.HasPrefix(a, "initrd=") {
				args = append(args, a)
			}
		}
	}
	args = slices.DeleteFunc(args, func(a string) bool { return slices.Contains(c.OldKernelArgs, a) })
	args = append(args, c.NewKernelArgs...)

	// Record the prior state before touching the file: a crash after this point is discarded
	// by restoring it.
	if err := p.record(r, prior); err != nil {
		return err
	}
	if p.Flavor == Grub && len(args) == 0 {
		err = r.Remove(file, false)
	} else {
		err = writeFile(r, file, p.render(args))
	}
	if err != nil {
		return err
	}
	return p.regenerate(ctx, r)
}

func (p *Package) file() string {
	if p.Flavor == Grub {
		return GrubDropInPath
	}
	return KernelCmdlinePath
}

func (p *Package) render(args []string) string {
	if p.Flavor == Grub {
		return renderGrubDropIn(args)
	}
	return strings.Join(args, " ") + "\n"
}

// regenerate has the boot tooling pick up the file: kernel-install rewrites the running
// kernel's entry where Boot Loader Spec entries exist (elsewhere the boot loader reads
// /etc/kernel/cmdline itself); GRUB regenerates grub.cfg.
func (p *Package) regenerate(ctx context.Context, r *noderoot.Root) error {
	if p.Flavor == Grub {
		command := p.GrubCommand
		if len(command) == 0 {
			command = []string{"update-grub"}
		}
		return p.cmd.cmd(ctx, command[0], command[1:]...)
	}
	info, err := r.Lstat(loaderEntriesPath)
	if err != nil || info.Type != noderoot.Directory {
		return err
	}
	release, err := p.Kernel.Release()
	if err != nil {
		return err
	}
	image := "/boot/vmlinuz-" + release
	if ok, err := r.Exists(image); err != nil || !ok {
		return err // the running kernel's image is gone (removed by an update): nothing to rewrite
	}
	return p.cmd.cmd(ctx, "kernel-install", "add", release, image)
}

func (p *Package) record(r *noderoot.Root, prior packageStaged) error {
	data, err := json.Marshal(prior)
	if err != nil {
		return err
	}
	if _, err := r.MkdirAll(path.Dir(PackageStagedPath), noderoot.DirSpec{Perm: 0o700}); err != nil {
		return err
	}
	if err := r.WriteFile(PackageStagedPath, data, noderoot.WriteOptions{Perm: 0o600}); err != nil {
		return err
	}
	p.staged = &prior
	return nil
}

// Discard puts back the file the last Stage of this boot replaced and regenerates the boot
// loader entries from it. Without a record (nothing staged, or staged before the last boot and
// so booted) there is nothing to undo.
func (p *Package) Discard(ctx context.Context) error {
	r, err := noderoot.Open(p.Root)
	if err != nil {
		return err
	}
	defer r.Close()
	prior := p.staged
	if prior == nil {
		data, err := r.ReadFile(PackageStagedPath)
		if noderoot.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		prior = &packageStaged{}
		if err := json.Unmarshal(data, prior); err != nil {
			return fmt.Errorf("%s: %w", PackageStagedPath, err)
		}
	}
	if prior.Path != p.file() {
		return fmt.Errorf("%s records a staging of %s, this backend stages %s", PackageStagedPath, prior.Path, p.file())
	}
	if prior.Existed {
		err = writeFile(r, prior.Path, prior.Content)
	} else {
		err = r.Remove(prior.Path, false)
	}
	if err == nil {
		err = p.regenerate(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("restoring %s: %w", prior.Path, err)
	}
	p.staged = nil
	return r.Remove(PackageStagedPath, false)
}

// Booted is the kernel's command line; these hosts have no image, and their kernel type and
// extensions are the distribution's business.
func (p *Package) Booted(context.Context) (Booted, error) { return p.Kernel.booted() }

func readOptional(r *noderoot.Root, p string) (packageStaged, error) {
	data, err := r.ReadFile(p)
	if noderoot.IsNotExist(err) {
		return packageStaged{Path: p}, nil
	}
	if err != nil {
		return packageStaged{}, err
	}
	return packageStaged{Path: p, Existed: true, Content: string(data)}, nil
}

// writeFile replaces p atomically and durably (temp file, fsync, rename, directory fsync).
func writeFile(r *noderoot.Root, p, content string) error {
	if _, err := r.MkdirAll(path.Dir(p), noderoot.DefaultDir); err != nil {
		return err
	}
	return r.WriteFile(p, []byte(content), noderoot.WriteOptions{Perm: 0o644})
}

// The GRUB drop-in extends GRUB_CMDLINE_LINUX. Its arguments are also kept as JSON in a
// comment, so the next Stage reads back exactly the list it wrote.
const grubArgsComment = "# mco-kernel-args: "

func renderGrubDropIn(args []string) string {
	list, _ := json.Marshal(args)
	var quoted strings.Builder
	for _, a := range args {
		quoted.WriteByte(' ')
		quoted.WriteString(shellDoubleQuoteEscape(a))
	}
	return "# Written by mco: the kernel arguments of this node's MachineConfig.\n" +
		grubArgsComment + string(list) + "\n" +
		`GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX` + quoted.String() + "\"\n"
}

func parseGrubDropIn(content string) ([]string, error) {
	if content == "" {
		return nil, nil
	}
	for _, line := range strings.Split(content, "\n") {
		if rest, ok := strings.CutPrefix(line, grubArgsComment); ok {
			var args []string
			if err := json.Unmarshal([]byte(rest), &args); err != nil {
				return nil, fmt.Errorf("%s: %w", GrubDropInPath, err)
			}
			return args, nil
		}
	}
	return nil, errors.New(GrubDropInPath + " was not written by mco (no " + strings.TrimSpace(grubArgsComment) + " line); remove or rename it")
}

// shellDoubleQuoteEscape escapes what is special inside a shell double-quoted string.
func shellDoubleQuoteEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\\' || r == '"' || r == '$' || r == '`' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
