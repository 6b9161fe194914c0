package plantedlink

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

func TestCheck(t *testing.T) {
	hop := func(link, target, into string) noderoot.Hop {
		return noderoot.Hop{Link: link, Target: target, Into: into}
	}
	cases := []struct {
		name    string
		path    string
		parents noderoot.Parents
		want    string // "" accepted
	}{
		{"no link at all", "/etc/x/f", noderoot.Parents{Resolved: "/etc/x", Existing: "/etc"}, ""},
		{"no link, even on a kernel file system's magic", "/etc/x/f",
			noderoot.Parents{Resolved: "/etc/x", Existing: "/etc", FSType: unix.PROC_SUPER_MAGIC}, ""},
		{"relative link inside the root to a directory", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "../usr/lib/x", "/usr/lib/x")}, Resolved: "/usr/lib/x", Existing: "/usr/lib/x", FSType: unix.EXT4_SUPER_MAGIC}, ""},
		{"absolute link inside the root", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "/var/lib/x", "/var/lib/x")}, Resolved: "/var/lib/x", Existing: "/var/lib/x", FSType: unix.XFS_SUPER_MAGIC}, ""},
		{"link to a directory still to be made", "/etc/x/a/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "/var/x", "/var/x")}, Resolved: "/var/x/a", Existing: "/var", FSType: unix.OVERLAYFS_SUPER_MAGIC}, ""},
		{"link onto tmpfs (/run) is an ordinary directory", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "/run/x", "/run/x")}, Resolved: "/run/x", Existing: "/run/x", FSType: unix.TMPFS_MAGIC}, ""},
		{"relative link climbing out of the root", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "../../../../../../../../tmp", "/tmp")}, Resolved: "/tmp", Existing: "/tmp", FSType: unix.TMPFS_MAGIC},
			`file /etc/x/f: /etc/x is a symbolic link to "../../../../../../../../tmp", which leaves the host root`},
		{"one dot-dot too many", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "../../etc", "/etc")}, Resolved: "/etc", Existing: "/etc"},
			`/etc/x is a symbolic link to "../../etc", which leaves the host root`},
		{"dot-dot after a name stays inside", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "a/../../tmp", "/tmp")}, Resolved: "/tmp", Existing: "/tmp"}, ""},
		{"second link of a chain leaves the root", "/etc/x/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/x", "/usr/x", "/usr/x"), hop("/usr/x", "../../../y", "/y")}, Resolved: "/y", Existing: "/y"},
			`file /etc/x/f: /usr/x is a symbolic link to "../../../y", which leaves the host root`},
		{"link into /proc", "/etc/y/comm", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/y", "/proc/self", "/proc/self"), hop("/proc/self", "4242", "/proc/4242")}, Resolved: "/proc/4242", Existing: "/proc/4242", FSType: unix.PROC_SUPER_MAGIC},
			`file /etc/y/comm: /etc/y is a symbolic link to "/proc/self", which leads into /proc, a kernel file system the agent never writes to`},
		{"relative link into /sys", "/etc/y/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/y", "../sys/kernel", "/sys/kernel")}, Resolved: "/sys/kernel", Existing: "/sys/kernel", FSType: unix.SYSFS_MAGIC},
			`/etc/y is a symbolic link to "../sys/kernel", which leads into /sys`},
		{"link to /dev", "/etc/y/sda", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/y", "/dev", "/dev")}, Resolved: "/dev", Existing: "/dev", FSType: unix.TMPFS_MAGIC},
			`/etc/y is a symbolic link to "/dev", which leads into /dev`},
		{"link to / then down into /proc", "/etc/z/proc/sys/x", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/z", "/", "/")}, Resolved: "/proc/sys", Existing: "/proc/sys", FSType: unix.PROC_SUPER_MAGIC},
			`/etc/z is a symbolic link to "/", which leads into /proc (/proc/sys), a kernel file system`},
		{"link to a kernel file system mounted elsewhere", "/etc/y/f", noderoot.Parents{
			Hops: []noderoot.Hop{hop("/etc/y", "/mnt/cg", "/mnt/cg")}, Resolved: "/mnt/cg", Existing: "/mnt/cg", FSType: unix.CGROUP2_SUPER_MAGIC},
			`file /etc/y/f: /etc/y is a symbolic link to "/mnt/cg", which leads onto a cgroup2 file system (/mnt/cg), not a directory tree the agent may write into`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check("file", c.path, c.parents)
			switch {
			case c.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case c.want != "" && got == nil:
				t.Errorf("accepted, want %q", c.want)
			case c.want != "" && !strings.Contains(got.Error(), c.want):
				t.Errorf("got  %q\nwant %q", got.Error(), c.want)
			}
		})
	}
}

func TestLeavesRoot(t *testing.T) {
	cases := []struct {
		dir, target string
		want        bool
	}{
		{"/", "..", true},
		{"/", "tmp", false},
		{"/etc", "..", false},
		{"/etc", "../..", true},
		{"/etc", "/../../..", false}, // absolute: from the root, where ".." stays
		{"/a/b/c", "../../../x", false},
		{"/a/b/c", "../../../../x", true},
		{"/a/b", "./.././../x", false},
		{"/a", "x/../../../y", true},
	}
	for _, c := range cases {
		if got := leavesRoot(c.dir, c.target); got != c.want {
			t.Errorf("leavesRoot(%q, %q) = %v, want %v", c.dir, c.target, got, c.want)
		}
	}
}
