package machine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/dev/machine/metadata"
)

// Paths on the machine's disk (the ext4 file), outside the root file system, the way a boot
// partition sits beside the root.
const (
	upperDir        = "upper"
	workDir         = "work"
	loaderStateFile = "loader/state.json"
	provisionedFile = "loader/provisioned"
)

// mount points inside the machine's directory; used only in the machine's mount namespace.
func (c Config) mnt(name string) string { return filepath.Join(c.Dir, "mnt", name) }

// Boot runs as PID 1 of the machine's fresh namespaces: it moves into the machine's own cgroups
// and a cgroup namespace, mounts the disk, plays boot loader (image, command line), runs
// Ignition on the first boot, pivots into the machine's root, and replaces itself with systemd.
// It returns only on failure.
func Boot(ctx context.Context, c Config) error {
	if os.Getpid() != 1 {
		return errors.New("machine boot must run as PID 1 of a new PID namespace (started by the supervisor)")
	}
	// The machine's cgroup namespace is this thread's only, and systemd is exec'd from it.
	runtime.LockOSThread()
	if c.Network != nil {
		if err := waitNetwork(); err != nil {
			return err
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := c.enterOwnCgroups(); err != nil {
		return err
	}
	disk, host, root := c.mnt("disk"), c.mnt("host"), c.mnt("root")
	// A loop mount's device is released with the last reference to it, which is this
	// namespace: a machine that ends leaves nothing mounted behind.
	if out, err := exec.Command("mount", "-o", "loop", c.path(diskFile), disk).CombinedOutput(); err != nil {
		return fmt.Errorf("mounting the disk %s: %w: %s", c.path(diskFile), err, out)
	}
	for _, d := range []string{upperDir, workDir, "loader"} {
		if err := os.MkdirAll(filepath.Join(disk, d), 0o755); err != nil {
			return err
		}
	}
	choice, err := c.chooseBoot(disk)
	if err != nil {
		return err
	}
	if err := unix.Mount("/", host, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding the host OS: %w", err)
	}
	image := filepath.Join(c.ImagesDir, osimage.DevImageDirName(choice.Image))
	if _, err := os.Stat(image); err != nil {
		return fmt.Errorf("OS image %q is not in %s: %w", choice.Image, c.ImagesDir, err)
	}
	layer, err := c.stageLayer(image)
	if err != nil {
		return err
	}
	opts := fmt.Sprintf("lowerdir=%s:%s,upperdir=%s,workdir=%s", layer, host, filepath.Join(disk, upperDir), filepath.Join(disk, workDir))
	if err := unix.Mount("overlay", root, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mounting the root overlay (%s): %w", opts, err)
	}
	bound, err := readBound(image)
	if err != nil {
		return fmt.Errorf("OS image %q: %w", choice.Image, err)
	}
	for path, name := range bound {
		if err := bindReadOnly(filepath.Join(image, imageBoundDir, name), filepath.Join(root, path)); err != nil {
			return fmt.Errorf("the image's %s: %w", path, err)
		}
	}
	if err := c.mountAPIFileSystems(root); err != nil {
		return err
	}
	if err := presentKernelSettings(root); err != nil {
		return err
	}
	firstBoot := !exists(filepath.Join(disk, provisionedFile))
	if firstBoot {
		if err := c.provision(ctx, root); err != nil {
			return fmt.Errorf("first boot: %w", err)
		}
		if err := os.WriteFile(filepath.Join(disk, provisionedFile), nil, 0o644); err != nil {
			return err
		}
	}
	// The command line is read after provisioning: Ignition may have written one.
	written, err := os.ReadFile(filepath.Join(root, osimage.KernelCmdlinePath))
	choice.Cmdline = Cmdline(string(written), err == nil)
	if err := c.presentBoot(root, choice); err != nil {
		return err
	}
	if err := recordLoaderState(disk, choice); err != nil {
		return err
	}
	// Nothing written on the disk outside the root may be lost to a power cut before systemd
	// starts; the root's writes are the machine's own business from here on.
	unix.Sync()
	if err := unix.Sethostname([]byte(c.Name)); err != nil {
		return err
	}
	if err := pivotRoot(root); err != nil {
		return err
	}
	// systemd in a container leaves / private; mount propagation into pods (HostToContainer,
	// Bidirectional) needs it shared, as on a host. Nothing propagates to the host: every mount
	// here was made private first.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("making / shared: %w", err)
	}
	// Only now is the machine's root the mount namespace's: the supervisor reports the machine
	// running, and commands may enter it.
	reportBoot(choice)
	env := []string{"container=mco-dev", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return syscall.Exec("/lib/systemd/systemd", []string{"/lib/systemd/systemd"}, env)
}

// pivotRoot makes root the root of this mount namespace and detaches the old one, the host's /
// (the overlay keeps its layers). A chroot would leave the host's / the namespace's root: where
// nsenter --mount lands, and where runc resolves a container's paths (kubectl exec fails).
func pivotRoot(root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	// With new and old root both ".", the old root ends up mounted on top of the new one.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root %s: %w", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	return os.Chdir("/")
}

// bootFactsFD is the pipe on which the boot stage tells its supervisor what it presented.
const bootFactsFD = 3

// reportBoot sends the supervisor what this boot presents and closes the pipe, so systemd
// does not inherit it.
func reportBoot(choice BootChoice) {
	f := os.NewFile(bootFactsFD, "boot-facts")
	if f == nil {
		return
	}
	_ = json.NewEncoder(f).Encode(choice)
	_ = f.Close()
}

// chooseBoot reads the loader's state and the staging the OS left for this boot.
func (c Config) chooseBoot(disk string) (BootChoice, error) {
	var last LoaderState
	if data, err := os.ReadFile(filepath.Join(disk, loaderStateFile)); err == nil {
		if err := json.Unmarshal(data, &last); err != nil {
			return BootChoice{}, fmt.Errorf("%s: %w", loaderStateFile, err)
		}
	}
	// The staging lives in the root's writable layer; a boot loader reads the root's /boot.
	stagedPath := filepath.Join(disk, upperDir, osimage.DevStagedImagePath)
	staged, _ := os.ReadFile(stagedPath)
	choice := ChooseImage(c.Image, last, string(staged))
	if choice.ConsumedStaged {
		if err := os.Remove(stagedPath); err != nil {
			return BootChoice{}, err
		}
	}
	return choice, nil
}

func recordLoaderState(disk string, choice BootChoice) error {
	data, err := json.Marshal(LoaderState{Image: choice.Image})
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(disk, loaderStateFile), data, 0o644)
}

// mountAPIFileSystems gives the root what a container manager gives a systemd container: proc,
// sys, its cgroups (mountable only once sysfs is), fresh /run and /tmp, and the host's /dev.
func (c Config) mountAPIFileSystems(root string) error {
	mount := func(fstype, target, data string) error {
		if err := unix.Mount(fstype, filepath.Join(root, target), fstype, unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
			return fmt.Errorf("mounting %s on /%s: %w", fstype, target, err)
		}
		return nil
	}
	if err := mount("proc", "proc", ""); err != nil {
		return err
	}
	if err := mount("sysfs", "sys", ""); err != nil {
		return err
	}
	if err := mountCgroups(root); err != nil {
		return err
	}
	if err := mount("tmpfs", "run", "mode=0755"); err != nil {
		return err
	}
	if err := mount("tmpfs", "tmp", "mode=1777"); err != nil {
		return err
	}
	if err := unix.Mount("/dev", filepath.Join(root, "dev"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding /dev: %w", err)
	}
	for _, h := range c.Hide {
		target := filepath.Join(root, h)
		if !exists(target) {
			continue
		}
		if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_RDONLY, "size=4k"); err != nil {
			return fmt.Errorf("hiding %s: %w", h, err)
		}
	}
	return nil
}

// presentBoot is the firmware's part: the booted image (and every image the registry holds,
// read-only, so the OS can "pull" one), the command line as /proc/cmdline, and the metadata.
func (c Config) presentBoot(root string, choice BootChoice) error {
	run := filepath.Join(root, "run", "mco-dev")
	registry := filepath.Join(root, osimage.DevRegistryPath)
	if err := os.MkdirAll(registry, 0o755); err != nil {
		return err
	}
	if err := bindReadOnly(c.ImagesDir, registry); err != nil {
		return fmt.Errorf("the image registry: %w", err)
	}
	meta, err := json.Marshal(c.Metadata)
	if err != nil {
		return err
	}
	cmdline := filepath.Join(run, "cmdline")
	for path, data := range map[string][]byte{
		filepath.Join(root, osimage.DevBootedImagePath): []byte(choice.Image + "\n"),
		cmdline:                            []byte(choice.Cmdline + "\n"),
		filepath.Join(root, metadata.Path): meta,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	if err := bindReadOnly(cmdline, filepath.Join(root, "proc", "cmdline")); err != nil {
		return fmt.Errorf("presenting the command line: %w", err)
	}
	return nil
}

// stageLayer copies the image's layer to a tmpfs of this boot (see imageLayerDir).
func (c Config) stageLayer(image string) (string, error) {
	layer := c.mnt("image")
	if err := unix.Mount("tmpfs", layer, "tmpfs", 0, "mode=0755"); err != nil {
		return "", fmt.Errorf("mounting the image layer's tmpfs: %w", err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(image, imageLayerDir)+"/.", layer).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copying the image layer: %w: %s", err, out)
	}
	for _, d := range opaqueDirs {
		if err := unix.Setxattr(filepath.Join(layer, d), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
			return "", fmt.Errorf("making %s opaque in the image layer: %w", d, err)
		}
	}
	return layer, nil
}

func bindReadOnly(src, target string) error {
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func randomMachineID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func trimLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
