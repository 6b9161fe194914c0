package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/osimage"
)

// ImageRefPath holds, inside a dev OS image, the image's own reference.
const ImageRefPath = "/usr/lib/mco-dev/image"

// MCOPath is where a dev OS image carries the mco binary (agent, first-boot service, dev
// platform facts), as an OS image carries its OS's tools.
const MCOPath = "/usr/local/bin/mco"

// Layout of an image directory: rootfs/ is the layer (small: accounts, markers, an empty
// placeholder for the mco binary), mco is the binary. overlayfs refuses a layer inside another
// layer's tree (ELOOP), and every directory on this host's root file system is inside the host
// layer, so each boot copies rootfs/ to a tmpfs and bind-mounts the binary over its placeholder.
const (
	imageLayerDir = "rootfs"
	// imageBoundDir holds the files bound into the root at boot, imageBoundList where each goes.
	imageBoundDir  = "bound"
	imageBoundList = "bound.json"
)

// opaqueDirs are directories of the image layer that replace the host's instead of merging
// with them: the dev OS image decides which units are enabled (the host's own enablement, a
// database server for instance, has no business on a node).
var opaqueDirs = []string{"/etc/systemd/system"}

// maskedUnits are units of the host's OS that fail in a machine: masked in the image's own
// /etc/systemd/system.
var maskedUnits = []string{
	// Every machine shares the host's /dev/console: the getty on it fails and the machine reads
	// degraded.
	"console-getty.service",
	// It would apply sysctl.d to the kernel every machine shares with the host: whatever a
	// MachineConfig writes there would change the host's settings (only the network's are the
	// machine's own, in its network namespace).
	"systemd-sysctl.service",
	// They would register the host OS's binfmt.d in the one kernel's binfmt_misc, and unregister
	// every entry, the host's too, when the machine powers off.
	"systemd-binfmt.service",
	"proc-sys-fs-binfmt_misc.automount",
}

// kubeletLogindDropIn is the drop-in with which the kubelet's graceful node shutdown raises
// logind's inhibitor delay, in the kubelet's own words (k8s.io/kubernetes
// pkg/kubelet/nodeshutdown/systemd, shutdownGracePeriod 15s). The kubelet writes it on its
// first start and reloads logind; shipped in the image, the first boot already has the delay.
const (
	kubeletLogindDropInPath = "/etc/systemd/logind.conf.d/99-kubelet.conf"
	kubeletLogindDropIn     = "# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=15\n"
)

// shutdownBoundDropIns bound a reboot or poweroff whose stop jobs hang. systemd's own targets
// already force the reboot when their job times out (JobTimeoutAction=reboot-force), after
// 30 min, and a real machine's hardware watchdog bounds what is left; a dev machine has no
// watchdog, and 30 min outlasts every test's wait. Same mechanism, shorter bound: a hung stop
// job ends in a forced reboot after 2 min, as the console then shows.
//
// The container scopes' bound is the hang itself, seen in the chaos suite in 1 of 6 to 2 of 6
// reboots of a busy cluster: systemd in a machine's namespaces, on this host's hybrid cgroup
// layout, sometimes misses that a container's scope emptied when runc removes the scope's
// cgroup right after its processes exit. The scope then waits out its stop timeout (90 s by
// default) with no process left in the machine but systemd and journald, and the reboot with
// it. 10 s of TimeoutStopSec (a prefix drop-in: every cri-containerd-*.scope) bounds the missed
// one. A live container gets the same 10 s from its SIGTERM to its SIGKILL at shutdown; the dev
// cluster runs none that needs more: the agent exits in milliseconds, a drain has moved the
// workloads off, and a master's kubelet stops its pods before systemd does (graceful node
// shutdown).
var shutdownBoundDropIns = map[string]string{
	"/etc/systemd/system/reboot.target.d/10-mco-dev-bound.conf":   "[Unit]\nJobTimeoutSec=2min\nJobTimeoutAction=reboot-force\n",
	"/etc/systemd/system/poweroff.target.d/10-mco-dev-bound.conf": "[Unit]\nJobTimeoutSec=2min\nJobTimeoutAction=poweroff-force\n",
	containerScopeDropInPath:                                      "[Scope]\nTimeoutStopSec=10s\n",
}

// containerScopeDropInPath bounds the stop of every container's scope (runc names them
// cri-containerd-<id>.scope under containerd's CRI).
const containerScopeDropInPath = "/etc/systemd/system/cri-containerd-.scope.d/10-mco-dev-bound.conf"

// Content is what a dev OS image carries besides the host's OS and what every image has.
type Content struct {
	// HostFiles are bound read-only into the root at each boot, path in the image → file on
	// this host (copied into the image, hard-linked when it can be): binaries too big to copy
	// into each boot's layer (mco, the kubelet) and preloaded container images.
	HostFiles map[string]string
	// Files are written into the layer: path → content.
	Files map[string]string
	// Links are symlinks in the layer, path → target: the units the image's packages enable
	// (multi-user.target.wants/<unit> → the unit), as their installation would leave them.
	Links map[string]string
}

// BuildImage creates the dev OS image ref in imagesDir carrying the mco binary and extra files
// (path → content), so tests can build images that differ; see BuildImageWith.
func BuildImage(imagesDir, ref, mco string, extra map[string]string) error {
	return BuildImageWith(imagesDir, ref, Content{HostFiles: map[string]string{MCOPath: mco}, Files: extra})
}

// BuildImageWith creates the dev OS image ref in imagesDir, unless it exists: the host's OS (the
// lower layer every machine has) plus one layer with the core user (as on CoreOS), the image's
// reference, its unit enablement (maskedUnits), the kubelet's logind drop-in, and content.
func BuildImageWith(imagesDir, ref string, content Content) error {
	dir := filepath.Join(imagesDir, osimage.DevImageDirName(ref))
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp := dir + ".building"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	bound := map[string]string{}
	files := map[string]string{}
	for i, path := range slices.Sorted(maps.Keys(content.HostFiles)) {
		name := strconv.Itoa(i)
		if err := linkOrCopy(content.HostFiles[path], filepath.Join(tmp, imageBoundDir, name)); err != nil {
			return fmt.Errorf("image %s: %s: %w", ref, path, err)
		}
		bound[path] = name
		files[path] = "" // the mount point
	}
	list, err := json.Marshal(bound)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, imageBoundList), list, 0o644); err != nil {
		return err
	}
	layer := filepath.Join(tmp, imageLayerDir)
	maps.Copy(files, map[string]string{ImageRefPath: ref + "\n",
		// The image's own enablement: a node's essentials only (see opaqueDirs).
		"/etc/systemd/system/multi-user.target.wants/.keep": "",
		kubeletLogindDropInPath:                             kubeletLogindDropIn})
	maps.Copy(files, shutdownBoundDropIns)
	maps.Copy(files, content.Files)
	accounts, uid, err := withCoreUser()
	if err != nil {
		return err
	}
	for k, v := range accounts {
		files[k] = v
	}
	for path, data := range files {
		perm := os.FileMode(0o644)
		switch {
		case strings.Contains(path, "shadow"):
			perm = 0o640
		case content.HostFiles[path] != "":
			perm = 0o755
		}
		if err := writeFile(filepath.Join(layer, path), data, perm); err != nil {
			return err
		}
	}
	for path, target := range content.Links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(layer, path)), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, filepath.Join(layer, path)); err != nil {
			return fmt.Errorf("image %s: %s: %w", ref, path, err)
		}
	}
	for _, unit := range maskedUnits {
		if err := os.Symlink("/dev/null", filepath.Join(layer, "etc/systemd/system", unit)); err != nil {
			return err
		}
	}
	home := filepath.Join(layer, "home", "core")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	if err := os.Chown(home, uid, uid); err != nil {
		return err
	}
	// Ignition becomes core to write core's SSH keys: every directory above its home must be
	// traversable, as on a real disk.
	for p := filepath.Dir(home); ; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			return err
		}
		if p == layer {
			break
		}
	}
	return os.Rename(tmp, dir)
}

// withCoreUser returns the host's account databases plus a core user and group (with the first
// free id from 1000), and that id.
func withCoreUser() (map[string]string, int, error) {
	read := func(p string) (string, error) {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		s := string(data)
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return s, nil
	}
	out := map[string]string{}
	for _, p := range []string{"/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow"} {
		s, err := read(p)
		if err != nil {
			return nil, 0, err
		}
		out[p] = s
	}
	if hasEntry(out["/etc/passwd"], "core") {
		return nil, 0, fmt.Errorf("the host already has a core user; the dev OS image adds its own")
	}
	used := map[int]bool{}
	for _, db := range []string{"/etc/passwd", "/etc/group"} {
		for _, line := range strings.Split(out[db], "\n") {
			if f := strings.Split(line, ":"); len(f) > 2 {
				if id, err := strconv.Atoi(f[2]); err == nil {
					used[id] = true
				}
			}
		}
	}
	id := 1000
	for used[id] {
		id++
	}
	out["/etc/passwd"] += fmt.Sprintf("core:x:%d:%d:CoreOS Admin:/home/core:/bin/bash\n", id, id)
	out["/etc/group"] += fmt.Sprintf("core:x:%d:\n", id)
	out["/etc/shadow"] += "core:*:19000:0:99999:7:::\n"
	out["/etc/gshadow"] += "core:!::\n"
	return out, id, nil
}

func hasEntry(db, name string) bool {
	for _, line := range strings.Split(db, "\n") {
		if strings.HasPrefix(line, name+":") {
			return true
		}
	}
	return false
}

func writeFile(path, content string, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), perm)
}

// linkOrCopy puts src at dst (mode 0755), hard-linked when both are on one file system.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info, err := os.Stat(src); err != nil {
		return err
	} else if info.Mode().Perm() == 0o755 && os.Link(src, dst) == nil {
		return nil
	}
	return copyFile(src, dst, 0o755)
}

// readBound reads which files of image are bound where.
func readBound(image string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(image, imageBoundList))
	if err != nil {
		return nil, err
	}
	bound := map[string]string{}
	return bound, json.Unmarshal(data, &bound)
}

func copyFile(src, dst string, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RebindImageFile replaces, in every image of imagesDir that binds path, the host file bound
// there with a copy of src: machines that boot from then on see the new file, running ones keep
// the one they bound (the old file stays theirs until they reboot: a new inode, not a rewrite).
func RebindImageFile(imagesDir, path, src string) error {
	images, err := os.ReadDir(imagesDir)
	if err != nil {
		return err
	}
	for _, e := range images {
		if !e.IsDir() {
			continue // an archive kept beside the images
		}
		image := filepath.Join(imagesDir, e.Name())
		bound, err := readBound(image)
		if errors.Is(err, os.ErrNotExist) {
			continue // not an image, or one being built
		}
		if err != nil {
			return err
		}
		name, ok := bound[path]
		if !ok {
			continue
		}
		dst := filepath.Join(image, imageBoundDir, name)
		if err := linkOrCopy(src, dst+".new"); err != nil {
			return err
		}
		if err := os.Rename(dst+".new", dst); err != nil {
			return err
		}
	}
	return nil
}
