package imagepin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/pinnedimages"
)

// PinChange is what a pass asks of the runtime: Want pinned (every image of the node's sets that
// it has), and of Had (what mco pinned before), what is not in Want no longer. Pinned are the
// images the runtime already reports pinned, which need nothing.
type PinChange struct {
	Want, Had []string
	Pinned    map[string]bool
}

// Pinner makes the runtime keep images from the kubelet's image garbage collection.
type Pinner interface {
	Pin(ctx context.Context, c PinChange) error
}

// PinnerFunc is a Pinner of one function.
type PinnerFunc func(ctx context.Context, c PinChange) error

func (f PinnerFunc) Pin(ctx context.Context, c PinChange) error { return f(ctx, c) }

// Containerd's CRI reports an image pinned when its record carries this label with this value
// (containerd 1.7 and later: internal/cri/labels).
const (
	ContainerdPinnedLabel = "io.cri-containerd.pinned"
	ContainerdPinnedValue = "pinned"
	// ContainerdNamespace is the CRI's containerd namespace, where the kubelet's images are.
	ContainerdNamespace = "k8s.io"
)

// Containerd pins by labelling the image records in the CRI's namespace with ctr, the client
// every containerd package installs, run on the node (chrooted into Root when it is not "/").
// containerd tells its CRI of the change (an image update event), and the CRI reports the image
// pinned from then on.
type Containerd struct {
	Root string
	Run  systemd.Runner
}

// Commands are the ctr command lines that pin what ch wants and is not pinned yet, and unpin
// the rest of what mco pinned, in order.
func (c Containerd) Commands(ch PinChange) [][]string {
	var cmds [][]string
	label := func(ref, value string) {
		cmds = append(cmds, []string{"ctr", "--namespace", ContainerdNamespace, "images", "label", ref, ContainerdPinnedLabel + "=" + value})
	}
	for _, ref := range ch.Want {
		if !ch.Pinned[ref] {
			label(ref, ContainerdPinnedValue)
		}
	}
	for _, ref := range ch.Had {
		if !slices.Contains(ch.Want, ref) {
			label(ref, "") // an empty value removes the label
		}
	}
	return cmds
}

func (c Containerd) Pin(ctx context.Context, ch PinChange) error {
	var errs []error
	for _, cmd := range c.Commands(ch) {
		out, err := c.run(ctx, cmd)
		if err != nil {
			ref := cmd[5]
			if !slices.Contains(ch.Want, ref) && strings.Contains(string(out), "not found") {
				continue // unpinning an image the kubelet already removed
			}
			errs = append(errs, fmt.Errorf("image %s: %s: %w: %s", ref, strings.Join(cmd, " "), err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

func (c Containerd) run(ctx context.Context, cmd []string) ([]byte, error) {
	return chrootRun(ctx, c.Root, c.Run, cmd)
}

// chrootRun runs cmd on the node: directly when root is "/", chrooted into it otherwise.
func chrootRun(ctx context.Context, root string, run systemd.Runner, cmd []string) ([]byte, error) {
	if run == nil {
		run = systemd.ExecRunner
	}
	if root != "" && path.Clean(root) != "/" {
		return run(ctx, "chroot", append([]string{root}, cmd...)...)
	}
	return run(ctx, cmd[0], cmd[1:]...)
}

// CRIOUnit is the unit CRI-O runs as; a reload makes it read its drop-ins again.
const CRIOUnit = "crio.service"

// CRIO pins as OpenShift's agent does: the whole set in one drop-in
// (pinnedimages.CRIOPinnedImagesDropIn), written only when it changes, then CRI-O reloaded.
type CRIO struct {
	Root    *noderoot.Root
	Systemd systemd.Manager
}

// Pin writes every image of ch.Want, whatever CRI-O reports already: the drop-in is the whole set.
func (c CRIO) Pin(ctx context.Context, ch PinChange) error {
	data, err := pinnedimages.CRIODropIn(ch.Want)
	if err != nil {
		return err
	}
	have, err := c.Root.ReadFile(pinnedimages.CRIOPinnedImagesDropIn)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if data == nil {
			return nil
		}
	case err != nil:
		return err
	case string(have) == string(data):
		return nil
	}
	if data == nil {
		err = c.Root.Remove(pinnedimages.CRIOPinnedImagesDropIn, false)
	} else {
		err = c.Root.WriteFile(pinnedimages.CRIOPinnedImagesDropIn, data, noderoot.WriteOptions{Perm: 0o644})
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", pinnedimages.CRIOPinnedImagesDropIn, err)
	}
	if err := c.Systemd.Reload(ctx, CRIOUnit); err != nil {
		return fmt.Errorf("reloading CRI-O after writing %s: %w", pinnedimages.CRIOPinnedImagesDropIn, err)
	}
	return nil
}
