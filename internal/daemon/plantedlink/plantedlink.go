// Package plantedlink judges the symbolic links a host holds in the parent positions of a path
// a config writes, before the agent drains the node for it.
//
// The agent resolves every path inside the node root, as Ignition resolves paths in its
// chroot: a link in a parent position is followed, an absolute one from the root. A link that
// stays inside the root and leads to an ordinary directory is followed (OpenShift and Ignition
// write through it too). Refused, naming the path and the link:
//   - a relative link whose ".." climb above "/": on the host it only works because the
//     kernel stops ".." at the root, and from the agent's pod it would leave the root;
//   - a link leading into /proc, /sys or /dev, or onto any kernel file system (proc, sysfs,
//     cgroup, ...): a "file" there is a command to the running kernel, never a file kept.
package plantedlink

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/render"
)

// Refusal is a path the agent will not write, because of a link on the host in its parents.
type Refusal struct {
	What   string // file, link, unit, ...
	Path   string // as the config writes it
	Link   string // the link on the host, resolved up to it
	Target string // what the link holds
	Reason string // "leaves the host root", ...
}

func (e *Refusal) Error() string {
	return fmt.Sprintf("%s %s: %s is a symbolic link to %q, which %s", e.What, e.Path, e.Link, e.Target, e.Reason)
}

// Check is why what p may not be written through the links its parents hold on the host
// (nil: it may). Only links are judged: a path the config itself puts under /proc is
// render.PathProblem's, a parent that is missing or no directory noderoot.MissingDirs'.
func Check(what, p string, parents noderoot.Parents) *Refusal {
	if len(parents.Hops) == 0 {
		return nil
	}
	refuse := func(h noderoot.Hop, reason string) *Refusal {
		return &Refusal{What: what, Path: p, Link: h.Link, Target: h.Target, Reason: reason}
	}
	for _, h := range parents.Hops {
		if leavesRoot(path.Dir(h.Link), h.Target) {
			return refuse(h, "leaves the host root")
		}
		if fs := render.KernelFileSystemOf(h.Into); fs != "" {
			return refuse(h, "leads into "+fs+", a kernel file system the agent never writes to")
		}
	}
	last := parents.Hops[len(parents.Hops)-1]
	if fs := render.KernelFileSystemOf(parents.Resolved); fs != "" {
		return refuse(last, fmt.Sprintf("leads into %s (%s), a kernel file system the agent never writes to", fs, parents.Resolved))
	}
	if name, ok := kernelFileSystemTypes[parents.FSType]; ok {
		return refuse(last, fmt.Sprintf("leads onto a %s file system (%s), not a directory tree the agent may write into", name, parents.Existing))
	}
	return nil
}

// leavesRoot tells whether the relative target of a link in directory dir climbs above "/"
// when read as written; an absolute target starts at the root and cannot.
func leavesRoot(dir, target string) bool {
	if path.IsAbs(target) {
		return false
	}
	depth := strings.Count(strings.TrimSuffix(path.Clean(dir), "/"), "/")
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// kernelFileSystemTypes are file systems where the kernel, not a disk, answers (statfs
// magic). devtmpfs reports tmpfs's magic, so /dev is known by its path alone.
var kernelFileSystemTypes = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.BPF_FS_MAGIC:        "bpf",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.NSFS_MAGIC:          "nsfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
}
