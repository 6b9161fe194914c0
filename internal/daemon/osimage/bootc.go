package osimage

import (
	"context"
	"fmt"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// BootcKargsSource is the name mco's kernel arguments are tracked under in the boot entries.
const BootcKargsSource = "mco"

// Bootc stages with bootc (ostree backend): switch to an image, and kernel arguments.
//
// Kernel arguments: bootc's own per-machine API is `bootc loader-entries
// set-options-for-source` (bootc 1.15.2, needs ostree 2026.1; see bootc's
// docs/src/man/bootc-loader-entries-set-options-for-source.8.md). It records which arguments
// a source owns in the boot entries (x-options-source-<name>) and replaces that set as a whole,
// so it needs no memory of what mco set before, and it stages a new deployment, layered on a
// staged image switch if there is one. bootc's kargs.d only covers arguments built into the
// image, and `ostree admin kargs edit-in-place` edits the booted entries in place, which
// cannot be discarded as a staged deployment can.
type Bootc struct {
	Kernel Kernel
	cmd    runner
}

// NewBootc returns the bootc backend for a root.
func NewBootc(root string, run systemd.Runner) *Bootc { return &Bootc{cmd: chrooted(root, run)} }

func (*Bootc) Name() string { return "bootc" }

func (*Bootc) Supports(field string) bool {
	return field == FieldOSImageURL || field == FieldKernelArguments
}

func (b *Bootc) Stage(ctx context.Context, c Change) error {
	if c.KernelTypeChanged || c.ExtensionsChanged {
		return fmt.Errorf("bootc cannot switch kernels or install extensions: they come with the image")
	}
	// Start from the booted deployment, as for rpm-ostree.
	if err := b.Discard(ctx); err != nil {
		return err
	}
	if c.OSImageURL != "" {
		if err := b.cmd.cmd(ctx, "bootc", "switch", c.OSImageURL); err != nil {
			return err
		}
	}
	if c.KernelArgs {
		args := []string{"loader-entries", "set-options-for-source", "--source", BootcKargsSource}
		if len(c.NewKernelArgs) > 0 {
			args = append(args, "--options", strings.Join(c.NewKernelArgs, " "))
		}
		return b.cmd.cmd(ctx, "bootc", args...)
	}
	return nil
}

// Discard removes the staged deployment, if any, with `ostree admin undeploy 0`. A staged
// deployment is always first in ostree's deployment list, and writing the list without it
// deletes it (libostree's ostree-sysroot-deploy.c, _ostree_sysroot_write_deployments_internal:
// a staged deployment not kept at the head is unlinked from /run/ostree/staged-deployment and
// removed). `bootc rollback` is not a discard: it also queues the rollback deployment.
func (b *Bootc) Discard(ctx context.Context) error {
	st, err := b.status(ctx)
	if err != nil {
		return err
	}
	if st.Status.Staged == nil {
		return nil
	}
	return b.cmd.cmd(ctx, "ostree", "admin", "undeploy", "0")
}

// Booted reads the booted image from bootc status and the command line from the kernel.
func (b *Bootc) Booted(ctx context.Context) (Booted, error) {
	out, err := b.Kernel.booted()
	if err != nil {
		return Booted{}, err
	}
	st, err := b.status(ctx)
	if err != nil {
		return Booted{}, err
	}
	if st.Status.Booted == nil {
		return Booted{}, fmt.Errorf("bootc status shows no booted deployment")
	}
	if img := st.Status.Booted.Image; img != nil {
		out.Image = img.Image.Image
	}
	return out, nil
}

// bootcHost is the part of `bootc status --json` (org.containers.bootc/v1 BootcHost) read here.
type bootcHost struct {
	Status struct {
		Staged *bootcEntry `json:"staged"`
		Booted *bootcEntry `json:"booted"`
	} `json:"status"`
}

type bootcEntry struct {
	Image *struct {
		Image struct {
			Image     string `json:"image"`
			Transport string `json:"transport"`
		} `json:"image"`
	} `json:"image"`
}

func (b *Bootc) status(ctx context.Context) (*bootcHost, error) {
	return statusJSON[bootcHost](ctx, b.cmd, "bootc")
}
