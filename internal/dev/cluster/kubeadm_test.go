package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/protocol"
)

func golden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "kubeadm", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func fileOf(t *testing.T, set machine.FileSet, path string) machine.File {
	t.Helper()
	for _, f := range set.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("the file set has no %s", path)
	return machine.File{}
}

// A node of the kubeadm layout holds what kubeadm v1.36.3 itself writes for it
// (testdata/kubeadm: its kubelet-start phase's files for master-0 at 10.87.0.10).
func TestKubeadmFilesAreKubeadms(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	set, err := kubeadmFiles(kubeadmNode{NodeIP: "10.87.0.10", APIServerURL: "https://10.87.0.1:6443", CA: ca, Token: "abcdef.0123456789abcdef", CNI: "{}\n", ClusterDNS: devnet.Default().ClusterDNS()})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		KubeadmKubeletConfigPath:  golden(t, "config.yaml"),
		KubeadmInstanceConfigPath: golden(t, "instance-config.yaml"),
		KubeadmFlagsPath:          golden(t, "kubeadm-flags.env"),
		// The admin's addition, the way kubeadm's docs give for extra flags.
		KubeletDefaultsPath:                 "KUBELET_EXTRA_ARGS=--config-dir=/etc/kubernetes/kubelet.conf.d\n",
		KubeadmCAPath:                       string(ca),
		CNIConfDir + "/10-mco-dev.conflist": "{}\n",
	} {
		if got := fileOf(t, set, path).Content; got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
		}
	}
	boot := fileOf(t, set, KubeadmBootstrapKubeconfig)
	if boot.Mode != 0o600 {
		t.Errorf("%s mode %#o: it holds a token", boot.Path, boot.Mode)
	}
	cfg, err := clientcmd.Load([]byte(boot.Content))
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || ctx.AuthInfo != "tls-bootstrap-token-user" || cfg.AuthInfos[ctx.AuthInfo].Token != "abcdef.0123456789abcdef" ||
		cfg.Clusters[ctx.Cluster].Server != "https://10.87.0.1:6443" || string(cfg.Clusters[ctx.Cluster].CertificateAuthorityData) != string(ca) {
		t.Errorf("bootstrap kubeconfig:\n%s", boot.Content)
	}
	containerd := fileOf(t, set, "/etc/containerd/config.toml").Content
	for _, want := range []string{"version = 2\n", "SystemdCgroup = true\n", `config_path = "/etc/containerd/certs.d"`, `conf_dir = "/etc/cni/net.d"`, `snapshotter = "native"`, "restrict_oom_score_adj = true"} {
		if !strings.Contains(containerd, want) {
			t.Errorf("config.toml lacks %q:\n%s", want, containerd)
		}
	}
	dirs := map[string]bool{}
	for _, d := range set.Dirs {
		dirs[d.Path] = true
	}
	for _, want := range []string{KubeletConfigDir, ContainerdRegistryConfigPath, "/etc/kubernetes/manifests"} {
		if !dirs[want] {
			t.Errorf("no directory %s in %v", want, set.Dirs)
		}
	}
	for _, f := range set.Files {
		if strings.HasPrefix(f.Path, KubeletConfigDir+"/") || strings.HasPrefix(f.Path, ContainerdRegistryConfigPath+"/") {
			t.Errorf("%s: the kubelet's --config-dir and containerd's certs.d start empty", f.Path)
		}
		for _, mco := range []string{"/etc/machine-config-daemon", "/etc/mcs-machine-config-content.json", "node-annotations.json"} {
			if strings.Contains(f.Path, mco) {
				t.Errorf("%s: a kubeadm node has nothing of mco", f.Path)
			}
		}
	}
	if _, err := kubeadmFiles(kubeadmNode{NodeIP: "10.87.0.10", CA: ca, Token: "abcdef.0123456789abcdef"}); err == nil {
		t.Error("a node without the API server's URL got a bootstrap kubeconfig")
	}
}

// The distribution image carries the Kubernetes packages' unit and kubeadm's drop-in
// (kubernetes/release's templates, the .deb's paths), enables kubelet and containerd, and has
// nothing of mco.
func TestDistroImageIsAPackagedDistribution(t *testing.T) {
	c := distroContent("/bin/kubelet", "/x/pause.tar", "/x/mco.tar")
	for path, want := range map[string]string{
		kubeletPackageUnitPath:   golden(t, "kubelet.service"),
		KubeadmKubeletDropInPath: golden(t, "10-kubeadm.conf"),
		KubeletDefaultsPath:      golden(t, "default-kubelet"),
		"/etc/chrony.conf":       DistroChronyConf,
	} {
		if got := c.Files[path]; got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
		}
	}
	if c.Files[distroSSHDropInPath] == "" {
		t.Errorf("no %s", distroSSHDropInPath)
	}
	for _, unit := range []string{KubeletUnit, "containerd.service"} {
		if c.Links["/etc/systemd/system/multi-user.target.wants/"+unit] == "" {
			t.Errorf("%s is not enabled: %v", unit, c.Links)
		}
	}
	if _, ok := c.HostFiles[machine.MCOPath]; ok {
		t.Error("the distribution image carries mco")
	}
	for path := range c.Files {
		if strings.Contains(path, FirstBootUnit) || strings.Contains(path, PlatformUnit) {
			t.Errorf("%s: mco's units in the distribution image", path)
		}
	}
}

func TestNodeRoles(t *testing.T) {
	noSchedule := func(key string) []corev1.Taint {
		return []corev1.Taint{{Key: key, Effect: corev1.TaintEffectNoSchedule}}
	}
	for _, tc := range []struct {
		layout Layout
		name   string
		labels map[string]string
		taints []corev1.Taint
	}{
		{LayoutOpenShift, "master-0", map[string]string{protocol.MasterRoleLabel: ""}, noSchedule(protocol.MasterRoleLabel)},
		{LayoutOpenShift, "worker-2", map[string]string{protocol.WorkerRoleLabel: ""}, nil},
		{LayoutOpenShift, "infra-0", map[string]string{protocol.WorkerRoleLabel: ""}, nil},
		{LayoutKubeadm, "master-0", map[string]string{protocol.ControlPlaneRoleLabel: "", "node.kubernetes.io/exclude-from-external-load-balancers": ""}, noSchedule(protocol.ControlPlaneRoleLabel)},
		{LayoutKubeadm, "worker-0", nil, nil},
		{LayoutKubeadm, "infra-0", nil, nil},
	} {
		labels, taints := nodeRoles(tc.layout, tc.name)
		if !equalMaps(labels, tc.labels) || len(taints) != len(tc.taints) || len(taints) == 1 && taints[0] != tc.taints[0] {
			t.Errorf("%s %s: %v %v, want %v %v", tc.layout, tc.name, labels, taints, tc.labels, tc.taints)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestBootstrapToken(t *testing.T) {
	tok, err := newBootstrapToken()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(tok.String()) {
		t.Errorf("token %q is not kubeadm's form", tok)
	}
	expires := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sec := bootstrapTokenSecret(tok, expires)
	if sec.Namespace != "kube-system" || sec.Name != "bootstrap-token-"+tok.ID || sec.Type != corev1.SecretTypeBootstrapToken ||
		sec.StringData["token-secret"] != tok.Secret || sec.StringData["usage-bootstrap-authentication"] != "true" ||
		sec.StringData["auth-extra-groups"] != nodeTokenGroup || sec.StringData["expiration"] != "2026-01-02T03:04:05Z" {
		t.Errorf("token Secret %+v", sec)
	}
}

// The cluster's kubelet configuration (kube-system/kubelet-config) is the nodes' without their
// per-node patch and instance configuration.
func TestKubeletConfigMap(t *testing.T) {
	var data string
	for _, obj := range kubeadmClusterObjects(devnet.Default()) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == kubeletConfigMap {
			data = cm.Data["kubelet"]
		}
	}
	node := golden(t, "config.yaml")
	node = strings.Replace(node, "address: 10.87.0.10\n", "", 1)
	node = strings.Replace(node, "healthzBindAddress: 10.87.0.10", "healthzBindAddress: 127.0.0.1", 1)
	node = strings.Replace(node, "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock", `containerRuntimeEndpoint: ""`, 1)
	if data != node {
		t.Errorf("kubelet-config:\n%s\nwant:\n%s", data, node)
	}
}

func TestParseLayout(t *testing.T) {
	for in, want := range map[string]Layout{"": LayoutOpenShift, "openshift": LayoutOpenShift, "kubeadm": LayoutKubeadm} {
		if got, err := ParseLayout(in); err != nil || got != want {
			t.Errorf("ParseLayout(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseLayout("kind"); err == nil || !strings.Contains(err.Error(), `layout "kind": want "openshift" or "kubeadm"`) {
		t.Errorf("ParseLayout(kind) = %v", err)
	}
}
