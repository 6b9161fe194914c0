package hostlayout

import (
	"errors"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

// kubeadmKubeconfig is the shape `kubeadm join` leaves at /etc/kubernetes/kubelet.conf.
const kubeadmKubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTi0tLS0tCg==
    server: https://10.0.0.1:6443
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: system:node:worker-0
  name: system:node:worker-0@kubernetes
current-context: system:node:worker-0@kubernetes
kind: Config
preferences: {}
users:
- name: system:node:worker-0
  user:
    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
`

// generatedKubeletConf is JSON as the generated MachineConfigs write it.
const generatedKubeletConf = `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","maxPods":250}`

func writes(data string) nodefiles.Set {
	return nodefiles.Set{Entries: []nodefiles.Entry{{Path: KubeletConfPath, Data: []byte(data), Perm: 0o644}}}
}

// hostFile is a host whose KubeletConfPath holds data (nil: no file).
func hostFile(data []byte) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if p != KubeletConfPath {
			return nil, errors.New("asked for " + p)
		}
		return data, nil
	}
}

// TestHostFileReadOnlyWhenNeeded: a move that brings no new KubeletConfiguration to the path
// never reads the host; one that does reads it once and stops at a read error.
func TestHostFileReadOnlyWhenNeeded(t *testing.T) {
	for name, c := range map[string]struct{ current, next nodefiles.Set }{
		"next does not write the path": {nodefiles.Set{}, nodefiles.Set{}},
		"next writes a kubeconfig":     {nodefiles.Set{}, writes(kubeadmKubeconfig)},
		"current writes the path too":  {writes(generatedKubeletConf), writes(generatedKubeletConf)},
	} {
		err := CheckKubeletConf("rendered-worker-abc", c.current, c.next, func(p string) ([]byte, error) {
			t.Errorf("%s: read the host's %s", name, p)
			return nil, nil
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	reads := 0
	unreadable := errors.New("permission denied")
	err := CheckKubeletConf("rendered-worker-abc", nodefiles.Set{}, writes(generatedKubeletConf), func(string) ([]byte, error) {
		reads++
		return nil, unreadable
	})
	if !errors.Is(err, unreadable) || reads != 1 {
		t.Fatalf("err %v after %d reads, want the read error after 1", err, reads)
	}
}

func TestCheckKubeletConf(t *testing.T) {
	none := nodefiles.Set{}
	cases := []struct {
		name          string
		current, next nodefiles.Set
		onHost        *string // nil: no file on the host
		refused       bool
	}{
		{"kubeadm kubeconfig on the host", none, writes(generatedKubeletConf), ptr(kubeadmKubeconfig), true},
		{"kubeconfig as JSON", none, writes(generatedKubeletConf),
			ptr(`{"apiVersion":"v1","kind":"Config","clusters":[],"users":[]}`), true},
		{"kubeconfig without kind", none, writes(generatedKubeletConf), ptr("clusters:\n- name: k\n"), true},
		{"kubeconfig with only users", none, writes(generatedKubeletConf), ptr("users: []\n"), true},
		{"YAML KubeletConfiguration over a kubeconfig", none,
			writes("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n"), ptr(kubeadmKubeconfig), true},
		{"host already has a KubeletConfiguration (OpenShift layout)", none, writes(generatedKubeletConf),
			ptr("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n"), false},
		{"no file on the host", none, writes(generatedKubeletConf), nil, false},
		{"empty file on the host", none, writes(generatedKubeletConf), ptr(""), false},
		{"unparseable host file", none, writes(generatedKubeletConf), ptr("{clusters: [\n\t:"), false},
		{"host file of another kind", none, writes(generatedKubeletConf), ptr("apiVersion: v1\nkind: ConfigMap\n"), false},
		{"current config writes the path: mco's file", writes(kubeadmKubeconfig), writes(generatedKubeletConf), ptr(kubeadmKubeconfig), false},
		{"next writes a kubeconfig there", none, writes(kubeadmKubeconfig), ptr(kubeadmKubeconfig), false},
		{"next writes something unparseable there", none, writes("maxPods: [250"), ptr(kubeadmKubeconfig), false},
		{"KubeletConfiguration of another group", none,
			writes(`{"kind":"KubeletConfiguration","apiVersion":"example.com/v1"}`), ptr(kubeadmKubeconfig), false},
		{"next does not write the path", none,
			nodefiles.Set{Entries: []nodefiles.Entry{{Path: "/etc/kubernetes/other.conf", Data: []byte(generatedKubeletConf)}}},
			ptr(kubeadmKubeconfig), false},
		{"next makes the path a symlink", none,
			nodefiles.Set{Entries: []nodefiles.Entry{{Path: KubeletConfPath, Link: "/dev/null"}}}, ptr(kubeadmKubeconfig), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var onHost []byte
			if c.onHost != nil {
				onHost = []byte(*c.onHost)
			}
			err := CheckKubeletConf("rendered-worker-abc", c.current, c.next, hostFile(onHost))
			if (err != nil) != c.refused {
				t.Fatalf("refused=%v, want %v (err %v)", err != nil, c.refused, err)
			}
			if err == nil {
				return
			}
			var conflict *ConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("error %T, want *ConflictError", err)
			}
			for _, part := range []string{"rendered-worker-abc", KubeletConfPath, "kubeconfig (kubeadm layout",
				"cut the node off the API server", "nothing was written"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("reason %q does not say %q", err, part)
				}
			}
		})
	}
}

// TestConflictMessage pins the whole reason the Node shows.
func TestConflictMessage(t *testing.T) {
	err := CheckKubeletConf("rendered-worker-abc", nodefiles.Set{}, writes(generatedKubeletConf), hostFile([]byte(kubeadmKubeconfig)))
	want := "cannot move to rendered-worker-abc: it writes a KubeletConfiguration to /etc/kubernetes/kubelet.conf, " +
		"but this host's /etc/kubernetes/kubelet.conf is the kubelet's kubeconfig (kubeadm layout: the kubelet reads its " +
		"configuration from /var/lib/kubelet/config.yaml); writing a KubeletConfiguration there would cut the node off the " +
		"API server; remove the pool's KubeletConfigs (and any MachineConfig writing /etc/kubernetes/kubelet.conf), or " +
		"first move this host's kubelet to OpenShift's layout (--config=/etc/kubernetes/kubelet.conf, its kubeconfig " +
		"elsewhere) and take the kubeconfig off this path; nothing was written"
	if err == nil || err.Error() != want {
		t.Errorf("reason\n%v\nwant\n%s", err, want)
	}
}

func ptr(s string) *string { return &s }
