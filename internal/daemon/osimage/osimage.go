// Package osimage changes what a node boots: OS image, kernel arguments, kernel type and
// extensions, through rpm-ostree or bootc. Hosts with neither cannot take such changes; the
// agent reports them instead of failing the whole update.
package osimage

import (
	"context"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Change is what a backend is asked to stage for the next boot.
type Change struct {
	OSImageURL    string // empty: keep
	OldKernelArgs []string
	NewKernelArgs []string
	KernelArgs    bool // kernel arguments changed
}

// Backend stages OS changes; they take effect at the next reboot.
type Backend interface {
	Name() string
	// Supports reports whether the backend can carry out the named change
	// ("osImageURL", "kernelArguments", "extensions", "kernelType").
	Supports(change string) bool
	Stage(ctx context.Context, c Change) error
	// Discard drops anything staged (rollback).
	Discard(ctx context.Context) error
}

// Detect picks the backend the root has: rpm-ostree, else bootc, else none.
func Detect(root string, exists func(string) bool, run systemd.Runner) Backend {
	switch {
	case exists("/usr/bin/rpm-ostree"):
		return &RPMOSTree{cmd: chrooted(root, run)}
	case exists("/usr/bin/bootc"):
		return &Bootc{cmd: chrooted(root, run)}
	}
	return None{}
}

type command func(ctx context.Context, name string, args ...string) error

func chrooted(root string, run systemd.Runner) command {
	return func(ctx context.Context, name string, args ...string) error {
		return systemd.RunInRoot(ctx, run, root, name, args...)
	}
}

// None is a host without an image-based OS: only files, units and keys can change.
type None struct{}

func (None) Name() string                        { return "none" }
func (None) Supports(string) bool                { return false }
func (None) Stage(context.Context, Change) error { return fmt.Errorf("no OS backend on this host") }
func (None) Discard(context.Context) error       { return nil }

// RPMOSTree stages with rpm-ostree rebase and kargs.
type RPMOSTree struct{ cmd command }

func (*RPMOSTree) Name() string { return "rpm-ostree" }
func (*RPMOSTree) Supports(c string) bool {
	return c == "osImageURL" || c == "kernelArguments"
}

func (r *RPMOSTree) Stage(ctx context.Context, c Change) error {
	if err := r.cmd(ctx, "rpm-ostree", "cleanup", "-p"); err != nil {
		return err
	}
	if c.OSImageURL != "" {
		if err := r.cmd(ctx, "rpm-ostree", "rebase", "--experimental", "ostree-unverified-registry:"+c.OSImageURL); err != nil {
			return err
		}
	}
	if c.KernelArgs {
		args := []string{"kargs"}
		for _, a := range c.OldKernelArgs {
			args = append(args, "--delete-if-present="+a)
		}
		for _, a := range c.NewKernelArgs {
			args = append(args, "--append="+a)
		}
		return r.cmd(ctx, "rpm-ostree", args...)
	}
	return nil
}

func (r *RPMOSTree) Discard(ctx context.Context) error {
	return r.cmd(ctx, "rpm-ostree", "cleanup", "-p")
}

// Bootc stages with bootc switch; kernel arguments on bootc hosts come from the image.
type Bootc struct{ cmd command }

func (*Bootc) Name() string           { return "bootc" }
func (*Bootc) Supports(c string) bool { return c == "osImageURL" }

func (b *Bootc) Stage(ctx context.Context, c Change) error {
	if c.OSImageURL == "" {
		return nil
	}
	return b.cmd(ctx, "bootc", "switch", c.OSImageURL)
}

func (b *Bootc) Discard(ctx context.Context) error { return nil }
