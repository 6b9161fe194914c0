package daemon

import (
	"testing"

	"github.com/mco-dev/mco/internal/daemon/runningkubelet/kubelettest"
)

func TestKubeletHealthz(t *testing.T) {
	files := kubelettest.Files{
		"/etc/kubernetes/kubelet.conf":   "kind: KubeletConfiguration\nhealthzPort: 10300\n",
		"/etc/kubelet.d/10-address.conf": "healthzBindAddress: 10.87.0.11\n",
		"/etc/kubelet.d/20-port.conf":    "healthzPort: 10301\n",
		"/etc/kubelet.d/05-ignored.yaml": "healthzPort: 1\n",
		"/etc/off.conf":                  "healthzPort: 0\n",
		"/etc/wild.conf":                 "healthzBindAddress: 0.0.0.0\n",
		"/etc/bad.conf":                  "healthzPort: [\n",
	}
	for _, c := range []struct {
		name string
		args []string
		want string // "" for no check
		err  bool
	}{
		{"defaults", []string{"/usr/bin/kubelet"}, "http://127.0.0.1:10248/healthz", false},
		{"config file", []string{"kubelet", "--config=/etc/kubernetes/kubelet.conf"}, "http://127.0.0.1:10300/healthz", false},
		{"drop-ins over the file, in name order, .conf only", []string{"kubelet", "--config", "/etc/kubernetes/kubelet.conf", "--config-dir=/etc/kubelet.d"}, "http://10.87.0.11:10301/healthz", false},
		{"flags over everything", []string{"kubelet", "--config-dir=/etc/kubelet.d", "--healthz-port=10400", "--healthz-bind-address", "127.0.0.2"}, "http://127.0.0.2:10400/healthz", false},
		{"an empty drop-in directory", []string{"kubelet", "--config-dir=/nowhere"}, "http://127.0.0.1:10248/healthz", false},
		{"port 0 serves none", []string{"kubelet", "--config=/etc/off.conf"}, "", false},
		{"a wildcard answers on loopback", []string{"kubelet", "--config=/etc/wild.conf"}, "http://127.0.0.1:10248/healthz", false},
		{"a missing config file", []string{"kubelet", "--config=/etc/missing.conf"}, "", true},
		{"a config that is not YAML", []string{"kubelet", "--config=/etc/bad.conf"}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, ok, err := kubeletHealthz(c.args, files.Read, files.List)
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			if c.err {
				return
			}
			if got := map[bool]string{true: url}[ok]; got != c.want {
				t.Errorf("url %q (check %v), want %q", url, ok, c.want)
			}
		})
	}
}

// The running kubelet is found by its comm among the processes, and its files are read through
// its own root.
func TestRunningKubeletHealthz(t *testing.T) {
	proc := kubelettest.NewProc(t)
	if _, _, found, err := runningKubeletHealthz(proc.Dir); found || err != nil {
		t.Fatalf("found a kubelet where none runs: %v", err)
	}
	proc.Kubelet(42, "/usr/bin/kubelet", "--config=/etc/kubernetes/kubelet.conf", "--config-dir=/run/kubelet.d")
	proc.Write("42/root/etc/kubernetes/kubelet.conf", "healthzPort: 10248\n")
	proc.Write("42/root/run/kubelet.d/10-node-address.conf", "healthzBindAddress: 10.87.0.12\n")
	url, ok, found, err := runningKubeletHealthz(proc.Dir)
	if err != nil || !found || !ok || url != "http://10.87.0.12:10248/healthz" {
		t.Errorf("url %q check %v found %v err %v", url, ok, found, err)
	}
}
