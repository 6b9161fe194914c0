package machine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
)

// hierarchy is one line of /proc/self/cgroup: a cgroup hierarchy and the cgroup a process is
// in there.
type hierarchy struct {
	ID string
	// Controllers as the kernel lists them ("cpu", "cpuacct", "name=systemd"); none for the
	// unified (cgroup2) hierarchy.
	Controllers []string
	Path        string
}

func (h hierarchy) unified() bool { return h.ID == "0" && len(h.Controllers) == 0 }

func (h hierarchy) fsType() string {
	if h.unified() {
		return "cgroup2"
	}
	return "cgroup"
}

// options are the mount options that select this hierarchy: its controllers, or "none" and its
// name for a named hierarchy without controllers (systemd's).
func (h hierarchy) options() []string {
	if h.unified() {
		return nil
	}
	opts := slices.Clone(h.Controllers)
	if !slices.ContainsFunc(opts, func(c string) bool { return !strings.HasPrefix(c, "name=") }) {
		opts = append([]string{"none"}, opts...)
	}
	return opts
}

// dirName is the hierarchy's directory under /sys/fs/cgroup when the host mounts none:
// systemd's names ("systemd" for name=systemd, "cpu,cpuacct" for a comount).
func (h hierarchy) dirName() string {
	names := make([]string, len(h.Controllers))
	for i, c := range h.Controllers {
		names[i] = strings.TrimPrefix(c, "name=")
	}
	return strings.Join(names, ",")
}

// parseProcCgroup reads /proc/<pid>/cgroup.
func parseProcCgroup(text string) ([]hierarchy, error) {
	var out []hierarchy
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			return nil, fmt.Errorf("/proc/self/cgroup: unexpected line %q", line)
		}
		h := hierarchy{ID: f[0], Path: f[2]}
		if f[1] != "" {
			h.Controllers = strings.Split(f[1], ",")
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/self/cgroup is empty")
	}
	return out, nil
}

// machineCgroupName names the machine's own cgroup. The hash of the machine's directory tells
// apart machines of the same name in two dev clusters (an e2e test's and a demo's).
func machineCgroupName(name, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "mco-" + name + "-" + hex.EncodeToString(sum[:4])
}

// machineCgroupPath is the machine's own cgroup in h, below the cgroup its supervisor runs in.
func machineCgroupPath(h hierarchy, name, dir string) string {
	return path.Join(h.Path, machineCgroupName(name, dir))
}

// machineCgroupsOf finds a running machine's own cgroups in its init's /proc/<pid>/cgroup as
// the host reads it: each path cut after the component cgroupName (systemd inside moves itself
// below it). Hierarchies where the init is not below such a cgroup are left out.
func machineCgroupsOf(initCgroup, cgroupName string) ([]hierarchy, error) {
	hs, err := parseProcCgroup(initCgroup)
	if err != nil {
		return nil, err
	}
	var out []hierarchy
	for _, h := range hs {
		parts := strings.Split(h.Path, "/")
		if i := slices.Index(parts, cgroupName); i > 0 {
			h.Path = strings.Join(parts[:i+1], "/")
			out = append(out, h)
		}
	}
	return out, nil
}

// apiMount is a file system the boot stage mounts inside the machine's root.
type apiMount struct {
	// Target is relative to the machine's root.
	Target, FSType, Data string
}

// symlink is a link the boot stage creates inside the machine's root: Path → Target.
type symlink struct{ Path, Target string }

// cgroupLayout is how the machine sees its cgroups under /sys/fs/cgroup.
type cgroupLayout struct {
	Mounts   []apiMount
	Symlinks []symlink
}

// cgroupLayoutFor gives the machine the host's own cgroup layout, so systemd inside runs in the
// host's mode (a machine on cgroup2 alone gets no cpu or memory controller on a host that binds
// them to v1 hierarchies): a unified host gets cgroup2 at /sys/fs/cgroup; a v1 or hybrid host a
// tmpfs there with each v1 hierarchy in the directory the host mounts it at (systemd's names when
// it mounts none), a link per controller of a comount (cpu → cpu,cpuacct), and cgroup2 at
// unified/ when the host mounts it. procCgroup is /proc/self/cgroup, mountinfo
// /proc/self/mountinfo. The mounts are made after the machine's cgroup namespace is, so each
// shows the machine's own cgroup as its root.
func cgroupLayoutFor(procCgroup, mountinfo string) (cgroupLayout, error) {
	hs, err := parseProcCgroup(procCgroup)
	if err != nil {
		return cgroupLayout{}, err
	}
	const base = "sys/fs/cgroup"
	var v1 []hierarchy
	for _, h := range hs {
		if !h.unified() {
			v1 = append(v1, h)
		}
	}
	if len(v1) == 0 {
		return cgroupLayout{Mounts: []apiMount{{Target: base, FSType: "cgroup2"}}}, nil
	}
	mounts := parseCgroupMounts(mountinfo)
	layout := cgroupLayout{Mounts: []apiMount{{Target: base, FSType: "tmpfs", Data: "mode=0755"}}}
	for _, h := range v1 {
		dir := h.dirName()
		if at, ok := mountPointOf(mounts, h); ok {
			dir = path.Base(at)
		}
		layout.Mounts = append(layout.Mounts, apiMount{Target: path.Join(base, dir), FSType: "cgroup", Data: strings.Join(h.options(), ",")})
		for _, c := range h.Controllers {
			if !strings.HasPrefix(c, "name=") && c != dir && len(h.Controllers) > 1 {
				layout.Symlinks = append(layout.Symlinks, symlink{Path: path.Join(base, c), Target: dir})
			}
		}
	}
	for _, m := range mounts {
		if m.fsType == "cgroup2" {
			layout.Mounts = append(layout.Mounts, apiMount{Target: path.Join(base, "unified"), FSType: "cgroup2"})
			break
		}
	}
	return layout, nil
}

// cgroupMount is a cgroup file system mounted on the host, from /proc/self/mountinfo.
type cgroupMount struct {
	mountPoint, fsType string
	superOptions       []string
}

func parseCgroupMounts(mountinfo string) []cgroupMount {
	var out []cgroupMount
	for _, line := range strings.Split(mountinfo, "\n") {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		before, after, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pre, post := strings.Fields(before), strings.Fields(after)
		if len(pre) < 5 || len(post) < 3 || (post[0] != "cgroup" && post[0] != "cgroup2") {
			continue
		}
		out = append(out, cgroupMount{mountPoint: unescapeMountinfo(pre[4]), fsType: post[0], superOptions: strings.Split(post[2], ",")})
	}
	return out
}

// mountPointOf finds where the host mounts h: the v1 mount whose options name h's controllers.
// A controller belongs to one hierarchy only, so its name identifies the mount.
func mountPointOf(mounts []cgroupMount, h hierarchy) (string, bool) {
	for _, m := range mounts {
		if m.fsType != "cgroup" {
			continue
		}
		all := true
		for _, c := range h.Controllers {
			all = all && slices.Contains(m.superOptions, c)
		}
		if all {
			return m.mountPoint, true
		}
	}
	return "", false
}

// unescapeMountinfo undoes the octal escapes mountinfo writes for space, tab, newline and
// backslash.
func unescapeMountinfo(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
