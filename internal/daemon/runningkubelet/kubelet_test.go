package runningkubelet

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/runningkubelet/kubelettest"
	"github.com/mco-dev/mco/internal/kubeletfiles"
)

const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func TestFlag(t *testing.T) {
	args := []string{"/usr/bin/kubelet", "--config=/a", "--config", "/b", "-config-dir=/c", "--kubeconfig"}
	for name, want := range map[string]string{"config": "/b", "config-dir": "/c", "kubeconfig": "", "v": ""} {
		if got := Flag(args, name); got != want {
			t.Errorf("--%s: %q, want %q", name, got, want)
		}
	}
}

func TestRead(t *testing.T) {
	files := kubelettest.Files{
		"/var/lib/kubelet/config.yaml":      head + "maxPods: 110\n",
		"/etc/kubelet.d/10.conf":            head,
		"/etc/kubelet.d/sub/20.conf":        head,
		"/etc/kubelet.d/README":             "not read by the kubelet, listed all the same",
		"/run/kubelet/relative/config.yaml": head,
		"/run/kubelet/relative/d/x.conf":    head,
	}
	read, list := files.Read, files.List
	k, err := Read([]string{"kubelet", "--config=/var/lib/kubelet/config.yaml", "--config-dir", "/etc/kubelet.d/"}, "/", read, list)
	if err != nil {
		t.Fatal(err)
	}
	if k.ConfigPath != "/var/lib/kubelet/config.yaml" || string(k.Config) != files[k.ConfigPath] || k.DropInDir != "/etc/kubelet.d" ||
		len(k.DropIns) != 3 || k.DropIns["sub/20.conf"] == nil {
		t.Errorf("%+v", k)
	}
	k, err = Read([]string{"kubelet", "--config=relative/config.yaml", "--config-dir=relative/d"}, "/run/kubelet", read, list)
	if err != nil || k.ConfigPath != "/run/kubelet/relative/config.yaml" || k.DropInDir != "/run/kubelet/relative/d" || len(k.DropIns) != 1 {
		t.Errorf("relative to the working directory: %+v %v", k, err)
	}
	k, err = Read([]string{"kubelet", "--config-dir=/nowhere"}, "/", read, list)
	if err != nil || k.DropIns == nil || len(k.DropIns) != 0 || k.Config != nil {
		t.Errorf("a missing --config-dir reads as an empty one: %+v %v", k, err)
	}
	if k, err = Read([]string{"kubelet"}, "/", read, list); err != nil || k.DropIns != nil {
		t.Errorf("no --config-dir: %+v %v", k, err)
	}
	if _, err = Read([]string{"kubelet", "--config=/missing"}, "/", read, list); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing --config: %v", err)
	}
}

// The kubelet is found by its comm among the processes, and its files are read through its own
// root: an absolute symlink there resolves inside it, and subdirectories are walked.
func TestFind(t *testing.T) {
	proc := kubelettest.NewProc(t)
	if _, found, err := Find(proc.Dir); found || err != nil {
		t.Fatalf("found a kubelet where none runs: %v", err)
	}
	proc.Kubelet(42, "/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml", "--config-dir=/etc/kubernetes/kubelet.conf.d")
	proc.Write("42/root/var/lib/kubelet/config.yaml", head+"maxPods: 110\n")
	proc.Write("42/root/usr/share/kubelet/host.conf", head+"maxPods: 20\n")
	proc.Write("42/root/etc/kubernetes/kubelet.conf.d/sub/60.conf", head)
	if err := os.Symlink("/usr/share/kubelet/host.conf", filepath.Join(proc.Dir, "42/root/etc/kubernetes/kubelet.conf.d/10-host.conf")); err != nil {
		t.Fatal(err)
	}
	k, found, err := Find(proc.Dir)
	if err != nil || !found || k.PID != 42 {
		t.Fatalf("found %v pid %d: %v", found, k.PID, err)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range k.DropIns {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(got, []string{"10-host.conf", "sub/60.conf"}) || string(k.DropIns["10-host.conf"]) != head+"maxPods: 20\n" {
		t.Errorf("drop-ins %q", k.DropIns)
	}
}

func TestCheck(t *testing.T) {
	kc := kubeletfiles.DropInPath
	ours := []byte(head + "maxPods: 100\nlogging: {verbosity: 4}\n")
	config := []byte(head + "maxPods: 110\n")
	args := []string{"/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml", "--config-dir=" + kubeletfiles.DropInDir}
	cases := []struct {
		name string
		k    Kubelet
		want string // "" for in effect
	}{
		{"in effect", Kubelet{Args: args, Config: config, DropInDir: kubeletfiles.DropInDir, DropIns: map[string][]byte{"50-machineconfiguration.conf": ours, "10-host.conf": []byte(head + "maxPods: 20\n")}}, ""},
		{"no --config-dir", Kubelet{Args: args[:2], Config: config},
			"the kubelet drop-in /etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf is not in effect: the kubelet runs without --config-dir, so it reads no drop-ins; start it with --config-dir=/etc/kubernetes/kubelet.conf.d (on a kubeadm node: KUBELET_EXTRA_ARGS in /etc/default/kubelet or /etc/sysconfig/kubelet) and restart it"},
		{"another --config-dir", Kubelet{Args: args, Config: config, DropInDir: "/run/kubelet.d", DropIns: map[string][]byte{}},
			"is not in effect: the kubelet reads its drop-ins from --config-dir=/run/kubelet.d, not /etc/kubernetes/kubelet.conf.d"},
		{"not on the node", Kubelet{Args: args, Config: config, DropInDir: kubeletfiles.DropInDir, DropIns: map[string][]byte{}}, "the file is not on the node"},
		{"different on the node", Kubelet{Args: args, Config: config, DropInDir: kubeletfiles.DropInDir, DropIns: map[string][]byte{"50-machineconfiguration.conf": config}}, "the file on the node differs from the config's"},
		{"a later drop-in and a flag", Kubelet{Args: append(slices.Clone(args), "-v=2"), Config: config, DropInDir: kubeletfiles.DropInDir,
			DropIns: map[string][]byte{"50-machineconfiguration.conf": ours, "90-host.conf": []byte(head + "maxPods: 20\n")}},
			"is not in effect: the kubelet's configuration (its --config file, drop-ins and flags) does not have its logging.verbosity (--v), maxPods"},
		{"a drop-in the kubelet would refuse", Kubelet{Args: args, Config: config, DropInDir: kubeletfiles.DropInDir,
			DropIns: map[string][]byte{"50-machineconfiguration.conf": ours, "90-host.conf": []byte("maxPods: 20\n")}},
			`the kubelet's configuration cannot be read as the kubelet reads it: drop-in 90-host.conf: apiVersion "", kind ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.k.Check(kc, ours)
			var nie *NotInEffectError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v, want it in effect", err)
			case tc.want != "" && (!errors.As(err, &nie) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%v\nwant a NotInEffectError containing %q", err, tc.want)
			}
		})
	}
}
