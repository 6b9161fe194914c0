package machine

import (
	"reflect"
	"strings"
	"testing"
)

// This project's host: hybrid, every v1 controller in its own hierarchy, memory in a sandbox's
// cgroup.
const (
	hybridCgroup = `9:name=systemd:/
8:pids:/
4:memory:/process_api/20eaf3594771d04b4de1579e8b0c540f
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`
	hybridMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	// A systemd hybrid host as Debian 10 or RHEL 8 set it up: cpu and cpuacct comounted.
	comountCgroup = `12:name=systemd:/user.slice/session-1.scope
4:cpu,cpuacct:/user.slice
3:net_cls,net_prio:/
0::/user.slice/session-1.scope
`
	comountMountinfo = `25 18 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:4 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate
27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:6 - cgroup cgroup rw,xattr,name=systemd
30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
31 25 0:28 / /sys/fs/cgroup/net_cls,net_prio rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,net_cls,net_prio
`
	unifiedCgroup    = "0::/user.slice/user-0.slice/session-3.scope\n"
	unifiedMountinfo = `24 19 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
)

func TestCgroupLayoutFor(t *testing.T) {
	tmpfs := apiMount{Target: "sys/fs/cgroup", FSType: "tmpfs", Data: "mode=0755"}
	v1 := func(dir, data string) apiMount {
		return apiMount{Target: "sys/fs/cgroup/" + dir, FSType: "cgroup", Data: data}
	}
	unified := apiMount{Target: "sys/fs/cgroup/unified", FSType: "cgroup2"}
	for _, tc := range []struct {
		name                  string
		procCgroup, mountinfo string
		want                  cgroupLayout
	}{
		{name: "unified host: cgroup2 at /sys/fs/cgroup", procCgroup: unifiedCgroup, mountinfo: unifiedMountinfo,
			want: cgroupLayout{Mounts: []apiMount{{Target: "sys/fs/cgroup", FSType: "cgroup2"}}}},
		{name: "hybrid host: each v1 hierarchy where the host has it, cgroup2 at unified/", procCgroup: hybridCgroup, mountinfo: hybridMountinfo,
			want: cgroupLayout{Mounts: []apiMount{tmpfs, v1("systemd", "none,name=systemd"), v1("pids", "pids"),
				v1("memory", "memory"), v1("cpuset", "cpuset"), v1("cpuacct", "cpuacct"), v1("cpu", "cpu"), unified}}},
		{name: "comounted controllers: one mount at the joint name, a link per controller", procCgroup: comountCgroup, mountinfo: comountMountinfo,
			want: cgroupLayout{
				Mounts: []apiMount{tmpfs, v1("systemd", "none,name=systemd"), v1("cpu,cpuacct", "cpu,cpuacct"), v1("net_cls,net_prio", "net_cls,net_prio"), unified},
				Symlinks: []symlink{{"sys/fs/cgroup/cpu", "cpu,cpuacct"}, {"sys/fs/cgroup/cpuacct", "cpu,cpuacct"},
					{"sys/fs/cgroup/net_cls", "net_cls,net_prio"}, {"sys/fs/cgroup/net_prio", "net_cls,net_prio"}}}},
		{name: "a comount the host mounts under one controller's name links only the other", procCgroup: "3:cpu,cpuacct:/\n0::/\n",
			mountinfo: "30 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
			want:      cgroupLayout{Mounts: []apiMount{tmpfs, v1("cpu", "cpu,cpuacct")}, Symlinks: []symlink{{"sys/fs/cgroup/cpuacct", "cpu"}}}},
		{name: "v1 host without cgroup2 mounted: no unified/, systemd's names for what the host does not mount", procCgroup: "2:name=systemd:/\n1:memory:/\n0::/\n",
			mountinfo: "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			want:      cgroupLayout{Mounts: []apiMount{tmpfs, v1("systemd", "none,name=systemd"), v1("memory", "memory")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cgroupLayoutFor(tc.procCgroup, tc.mountinfo)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestParseProcCgroupRefusesWhatIsNotACgroupFile(t *testing.T) {
	for _, text := range []string{"", "\n", "0::relative\n", "memory:/\n"} {
		if _, err := parseProcCgroup(text); err == nil {
			t.Errorf("%q: no error", text)
		}
	}
}

func TestMachineCgroupPath(t *testing.T) {
	memory := hierarchy{ID: "4", Controllers: []string{"memory"}, Path: "/process_api/20eaf"}
	got := machineCgroupPath(memory, "worker-0", "/var/tmp/mco-demo/machines/worker-0")
	if !strings.HasPrefix(got, "/process_api/20eaf/mco-worker-0-") || len(got) != len("/process_api/20eaf/mco-worker-0-")+8 {
		t.Errorf("machine cgroup %q: want /process_api/20eaf/mco-worker-0-<8 hex digits>", got)
	}
	if other := machineCgroupPath(memory, "worker-0", "/tmp/TestE2E/machines/worker-0"); other == got {
		t.Errorf("machines of the same name in two clusters share the cgroup %s", got)
	}
	if root := machineCgroupPath(hierarchy{ID: "0", Path: "/"}, "m0", "/d"); !strings.HasPrefix(root, "/mco-m0-") {
		t.Errorf("below the root: %q", root)
	}
}

func TestMachineCgroupsOf(t *testing.T) {
	initCgroup := `9:name=systemd:/user.slice/mco-m0-0a1b2c3d/init.scope
4:memory:/process_api/20eaf/mco-m0-0a1b2c3d
3:cpuset:/
0::/user.slice/mco-m0-0a1b2c3d/init.scope
`
	got, err := machineCgroupsOf(initCgroup, "mco-m0-0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	want := []hierarchy{
		{ID: "9", Controllers: []string{"name=systemd"}, Path: "/user.slice/mco-m0-0a1b2c3d"},
		{ID: "4", Controllers: []string{"memory"}, Path: "/process_api/20eaf/mco-m0-0a1b2c3d"},
		{ID: "0", Path: "/user.slice/mco-m0-0a1b2c3d"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v (the init's cgroups cut at the machine's own; cpuset, where it is not below it, left out)", got, want)
	}
	if other, _ := machineCgroupsOf(initCgroup, "mco-m0-ffffffff"); len(other) != 0 {
		t.Errorf("another machine's cgroups: %+v", other)
	}
}
