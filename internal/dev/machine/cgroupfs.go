package machine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// enterOwnCgroups moves this process, the machine's PID 1 to be, into the machine's own cgroup in
// every hierarchy and makes those cgroups the root of a new cgroup namespace, so systemd inside
// has a tree of its own as on a host. Machines sharing one tree fail their units with
// status=219/CGROUP and cannot kill their control groups. A namespace made by clone(2) in the
// supervisor would be rooted at the supervisor's cgroup, hence here, after the move. The caller's
// OS thread must be locked: the namespace is this thread's until it execs systemd, and the
// machine's cgroup file systems must be mounted from it.
func (c Config) enterOwnCgroups() error {
	hs, err := ownHierarchies()
	if err != nil {
		return err
	}
	for _, h := range hs {
		if err := c.enterCgroup(h); err != nil {
			return fmt.Errorf("cgroup hierarchy %s:%s: %w", h.ID, strings.Join(h.Controllers, ","), err)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("a cgroup namespace: %w", err)
	}
	return nil
}

func (c Config) enterCgroup(h hierarchy) error {
	root, unmount, err := openHierarchy(h)
	if err != nil {
		return err
	}
	defer unmount()
	rel := machineCgroupPath(h, c.Name, c.Dir)
	// What a previous boot left if its supervisor could not remove it: a fresh boot starts
	// with no units' cgroups.
	if err := removeCgroupTree(root, rel); err != nil {
		return err
	}
	dir := filepath.Join(root, rel)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if slices.Contains(h.Controllers, "cpuset") {
		// A new v1 cpuset has no CPUs and no memory nodes, and no process may join it until it has.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	// 0 is the writing process; the kernel moves all its threads.
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0o644); err != nil {
		return fmt.Errorf("joining %s: %w", rel, err)
	}
	return nil
}

// removeCgroups removes the machine's cgroups from every hierarchy. The supervisor calls it once
// the boot's PID 1 is reaped: every process of a PID namespace is gone by then, so the cgroups
// are empty. The boot was started in the supervisor's cgroups, below which they are.
func (c Config) removeCgroups() error {
	hs, err := ownHierarchies()
	if err != nil {
		return err
	}
	for i, h := range hs {
		hs[i].Path = machineCgroupPath(h, c.Name, c.Dir)
	}
	return removeCgroupTrees(hs)
}

// removeCgroupTrees removes, in each hierarchy, the cgroup at its Path and every cgroup below.
func removeCgroupTrees(hs []hierarchy) error {
	var errs []error
	for _, h := range hs {
		root, unmount, err := openHierarchy(h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, removeCgroupTree(root, h.Path))
		unmount()
	}
	return errors.Join(errs...)
}

func ownHierarchies() ([]hierarchy, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	return parseProcCgroup(string(data))
}

// openHierarchy mounts h detached from every mount namespace (fsopen/fsmount) and returns the
// path of its root through this process's descriptor table, and the function that unmounts it.
// Neither the host nor the machine ever sees the mount, and the host's layout does not matter.
func openHierarchy(h hierarchy) (string, func(), error) {
	fsfd, err := unix.Fsopen(h.fsType(), unix.FSOPEN_CLOEXEC)
	if err != nil {
		return "", nil, fmt.Errorf("fsopen %s: %w", h.fsType(), err)
	}
	defer unix.Close(fsfd)
	for _, o := range h.options() {
		if k, v, ok := strings.Cut(o, "="); ok {
			err = unix.FsconfigSetString(fsfd, k, v)
		} else {
			err = unix.FsconfigSetFlag(fsfd, o)
		}
		if err != nil {
			return "", nil, fmt.Errorf("mount option %s: %w", o, err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return "", nil, fmt.Errorf("mounting %s %s: %w", h.fsType(), strings.Join(h.options(), ","), err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("fsmount %s: %w", h.fsType(), err)
	}
	return fmt.Sprintf("/proc/self/fd/%d", mfd), func() { _ = unix.Close(mfd) }, nil
}

// removeCgroupTree removes the cgroup rel below root and every cgroup below it, children first
// (a cgroup with children cannot be removed). A cgroup already gone is not an error.
func removeCgroupTree(root, rel string) error {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeCgroupTree(root, filepath.Join(rel, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := unix.Rmdir(filepath.Join(root, rel)); err != nil && err != unix.ENOENT {
		return fmt.Errorf("removing cgroup %s: %w", rel, err)
	}
	return nil
}

// mountCgroups mounts the machine's view of its cgroups (see cgroupLayoutFor) in root. It must
// run in the machine's cgroup namespace, which roots every mount at the machine's own cgroup.
func mountCgroups(root string) error {
	procCgroup, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return err
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	layout, err := cgroupLayoutFor(string(procCgroup), string(mountinfo))
	if err != nil {
		return err
	}
	for _, m := range layout.Mounts {
		target := filepath.Join(root, m.Target)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.FSType, target, m.FSType, unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, m.Data); err != nil {
			return fmt.Errorf("mounting %s (%s) on /%s: %w", m.FSType, m.Data, m.Target, err)
		}
	}
	for _, l := range layout.Symlinks {
		if err := os.Symlink(l.Target, filepath.Join(root, l.Path)); err != nil {
			return err
		}
	}
	return nil
}
