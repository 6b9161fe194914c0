package osimage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Kernel packages as Red Hat CoreOS ships them. A kernel switch removes the default kernel's
// packages from the base image and layers the other kernel's; the realtime list leaves out the
// kernel-rt meta-package (it pulls in far more) and kernel-rt-kvm (gone from RHEL 9.8 and 10).
var (
	defaultKernelPackages  = []string{"kernel", "kernel-core", "kernel-modules", "kernel-modules-core", "kernel-modules-extra"}
	realtimeKernelPackages = []string{"kernel-rt-core", "kernel-rt-modules", "kernel-rt-modules-extra"}
	kernel64kPackages      = []string{"kernel-64k-core", "kernel-64k-modules", "kernel-64k-modules-core", "kernel-64k-modules-extra"}
)

// RPMOSTree stages with rpm-ostree: rebase to a container image, kargs, kernel overrides and
// layered extension packages, each building on the pending deployment of the one before.
type RPMOSTree struct {
	Kernel Kernel
	cmd    runner
}

// NewRPMOSTree returns the rpm-ostree backend for a root.
func NewRPMOSTree(root string, run systemd.Runner) *RPMOSTree {
	return &RPMOSTree{cmd: chrooted(root, run)}
}

func (*RPMOSTree) Name() string { return "rpm-ostree" }

// Supports every field; FIPS mode itself is set up by the host's first boot (as on Red Hat
// CoreOS), the agent only checks it is on.
func (*RPMOSTree) Supports(string) bool { return true }

func (r *RPMOSTree) Stage(ctx context.Context, c Change) error {
	var extensions []string
	if c.ExtensionsChanged {
		var err error
		if extensions, err = ExtensionPackages(c.NewExtensions); err != nil {
			return err
		}
	}
	// A pending deployment left from an earlier attempt would be built upon; start from the
	// booted one.
	if err := r.Discard(ctx); err != nil {
		return err
	}
	if c.Empty() {
		return nil
	}
	// A kernel switch is redone across an image change: the kernel packages belong to the OS
	// release, so the override is reset before the rebase and applied again after it.
	switchKernel := c.KernelTypeChanged || (c.OSImageURL != "" && c.KernelType != "")
	var booted *rpmOSTreeDeployment
	if switchKernel || c.ExtensionsChanged {
		status, err := r.status(ctx)
		if err != nil {
			return err
		}
		if booted = status.booted(); booted == nil {
			return fmt.Errorf("rpm-ostree status shows no booted deployment")
		}
	}
	if switchKernel {
		if args := resetKernelArgs(booted); args != nil {
			if err := r.cmd.cmd(ctx, "rpm-ostree", args...); err != nil {
				return err
			}
		}
	}
	if c.OSImageURL != "" {
		if err := r.cmd.cmd(ctx, "rpm-ostree", "rebase", "--experimental", "ostree-unverified-registry:"+c.OSImageURL); err != nil {
			return err
		}
	}
	if c.KernelArgs {
		if args := kargsArgs(c.OldKernelArgs, c.NewKernelArgs); args != nil {
			if err := r.cmd.cmd(ctx, "rpm-ostree", args...); err != nil {
				return err
			}
		}
	}
	if switchKernel {
		if args := switchKernelArgs(CanonicalKernelType(c.KernelType)); args != nil {
			if err := r.cmd.cmd(ctx, "rpm-ostree", args...); err != nil {
				return err
			}
		}
	}
	if c.ExtensionsChanged {
		if args := extensionArgs(booted.RequestedPackages, extensions); args != nil {
			if err := r.cmd.cmd(ctx, "rpm-ostree", args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// kargsArgs removes what mco set before (tolerating its absence) and appends the new set.
func kargsArgs(old, new []string) []string {
	if len(old) == 0 && len(new) == 0 {
		return nil
	}
	args := []string{"kargs"}
	for _, a := range old {
		args = append(args, "--delete-if-present="+a)
	}
	for _, a := range new {
		args = append(args, "--append="+a)
	}
	return args
}

// resetKernelArgs undoes a kernel switch the booted deployment has (kernel packages removed
// from the base and realtime or 64k-pages kernel packages layered); nil when it has none.
func resetKernelArgs(booted *rpmOSTreeDeployment) []string {
	var removed, layered []string
	for _, p := range booted.RequestedBaseRemovals {
		if p == "kernel" || strings.HasPrefix(p, "kernel-") {
			removed = append(removed, p)
		}
	}
	for _, p := range booted.RequestedPackages {
		if strings.HasPrefix(p, "kernel-rt-") || strings.HasPrefix(p, "kernel-64k-") {
			layered = append(layered, p)
		}
	}
	if len(removed) == 0 || len(layered) == 0 {
		return nil // not switched (a machine-local kernel hotfix is left alone)
	}
	args := append([]string{"override", "reset"}, removed...)
	for _, p := range layered {
		args = append(args, "--uninstall", p)
	}
	return args
}

// switchKernelArgs replaces the default kernel by the wanted one; nil for the default kernel.
func switchKernelArgs(kernelType string) []string {
	var pkgs []string
	switch kernelType {
	case KernelTypeRealtime:
		pkgs = realtimeKernelPackages
	case KernelType64kPages:
		pkgs = kernel64kPackages
	default:
		return nil
	}
	args := append([]string{"override", "remove"}, defaultKernelPackages...)
	for _, p := range pkgs {
		args = append(args, "--install", p)
	}
	return args
}

// extensionArgs installs the wanted extension packages not layered yet and uninstalls layered
// extension packages no longer wanted; packages no extension provides are left alone.
func extensionArgs(installed, wanted []string) []string {
	var install, uninstall []string
	for _, p := range wanted {
		if !slices.Contains(installed, p) {
			install = append(install, p)
		}
	}
	all, _ := ExtensionPackages(KnownExtensions())
	for _, p := range installed {
		if slices.Contains(all, p) && !slices.Contains(wanted, p) {
			uninstall = append(uninstall, p)
		}
	}
	slices.Sort(install)
	slices.Sort(uninstall)
	if len(install) == 0 && len(uninstall) == 0 {
		return nil
	}
	args := []string{"update"}
	for _, p := range install {
		args = append(args, "--install", p)
	}
	for _, p := range uninstall {
		args = append(args, "--uninstall", p)
	}
	return args
}

// Discard removes the pending deployment.
func (r *RPMOSTree) Discard(ctx context.Context) error {
	return r.cmd.cmd(ctx, "rpm-ostree", "cleanup", "-p")
}

// Booted reads the booted deployment from rpm-ostree status and the command line from the
// kernel.
func (r *RPMOSTree) Booted(ctx context.Context) (Booted, error) {
	b, err := r.Kernel.booted()
	if err != nil {
		return Booted{}, err
	}
	status, err := r.status(ctx)
	if err != nil {
		return Booted{}, err
	}
	d := status.booted()
	if d == nil {
		return Booted{}, fmt.Errorf("rpm-ostree status shows no booted deployment")
	}
	if d.ContainerImageReference != "" {
		if b.Image, err = imageOfOSTreeRef(d.ContainerImageReference); err != nil {
			return Booted{}, err
		}
	}
	b.KernelType = KernelTypeDefault
	for _, p := range d.RequestedPackages {
		switch {
		case strings.HasPrefix(p, "kernel-rt-"):
			b.KernelType = KernelTypeRealtime
		case strings.HasPrefix(p, "kernel-64k-"):
			b.KernelType = KernelType64kPages
		}
	}
	b.Extensions = []string{}
	for _, e := range KnownExtensions() {
		pkgs := extensionPackages[e]
		if !slices.ContainsFunc(pkgs, func(p string) bool { return !slices.Contains(d.RequestedPackages, p) }) {
			b.Extensions = append(b.Extensions, e)
		}
	}
	return b, nil
}

// rpmOSTreeStatus is the part of `rpm-ostree status --json` the backend reads.
type rpmOSTreeStatus struct {
	Deployments []rpmOSTreeDeployment `json:"deployments"`
}

type rpmOSTreeDeployment struct {
	Booted                  bool     `json:"booted"`
	Staged                  bool     `json:"staged"`
	ContainerImageReference string   `json:"container-image-reference"`
	RequestedPackages       []string `json:"requested-packages"`
	RequestedBaseRemovals   []string `json:"requested-base-removals"`
}

func (s *rpmOSTreeStatus) booted() *rpmOSTreeDeployment {
	for i := range s.Deployments {
		if s.Deployments[i].Booted {
			return &s.Deployments[i]
		}
	}
	return nil
}

func (r *RPMOSTree) status(ctx context.Context) (*rpmOSTreeStatus, error) {
	return statusJSON[rpmOSTreeStatus](ctx, r.cmd, "rpm-ostree")
}

// statusJSON runs `<tool> status --json` and decodes what it prints.
func statusJSON[T any](ctx context.Context, cmd runner, tool string) (*T, error) {
	out, err := cmd.output(ctx, tool, "status", "--json")
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(jsonOf(out), &v); err != nil {
		return nil, fmt.Errorf("parsing %s status --json: %w", tool, err)
	}
	return &v, nil
}

// imageOfOSTreeRef is the container image of an ostree image reference, without its signature
// policy and transport: "ostree-unverified-registry:quay.io/x@sha256:…" is "quay.io/x@sha256:…".
// The forms are ostree-rs-ext's: ostree-unverified-registry:IMAGE,
// ostree-remote-registry:REMOTE:IMAGE, and ostree-unverified-image:, ostree-image-signed: and
// ostree-remote-image:REMOTE: followed by TRANSPORT:IMAGE.
func imageOfOSTreeRef(ref string) (string, error) {
	policy, rest, ok := strings.Cut(ref, ":")
	if !ok {
		return "", fmt.Errorf("invalid ostree image reference %q", ref)
	}
	switch policy {
	case "ostree-unverified-registry":
		return rest, nil
	case "ostree-remote-registry":
		if _, image, ok := strings.Cut(rest, ":"); ok {
			return image, nil
		}
	case "ostree-unverified-image", "ostree-image-signed":
		return stripTransport(rest)
	case "ostree-remote-image":
		if _, withTransport, ok := strings.Cut(rest, ":"); ok {
			return stripTransport(withTransport)
		}
	}
	return "", fmt.Errorf("invalid ostree image reference %q", ref)
}

func stripTransport(s string) (string, error) {
	transport, image, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("image reference %q has no transport", s)
	}
	if transport == "docker" {
		image = strings.TrimPrefix(image, "//")
	}
	return image, nil
}
