package cluster

import (
	"fmt"
	"net/netip"
	"path"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mco-dev/mco/internal/dev/machine"
)

// Where kubeadm and the Kubernetes packages put a node's kubelet files (kubeadm's constants,
// the packages' unit and drop-in: testdata/kubeadm).
const (
	KubeadmKubeletConfigPath   = "/var/lib/kubelet/config.yaml"
	KubeadmInstanceConfigPath  = "/var/lib/kubelet/instance-config.yaml"
	KubeadmFlagsPath           = "/var/lib/kubelet/kubeadm-flags.env"
	KubeadmBootstrapKubeconfig = "/etc/kubernetes/bootstrap-kubelet.conf"
	KubeadmKubeconfig          = "/etc/kubernetes/kubelet.conf"
	KubeadmCAPath              = "/etc/kubernetes/pki/ca.crt"
	KubeadmKubeletDropInPath   = "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
	// KubeletDefaultsPath is the packages' file of KUBELET_EXTRA_ARGS (Debian's path).
	KubeletDefaultsPath = "/etc/default/kubelet"
	// KubeletConfigDir is the kubelet's --config-dir, which a kubeadm user adds through
	// KUBELET_EXTRA_ARGS: drop-ins over config.yaml (KubeletConfigs).
	KubeletConfigDir = "/etc/kubernetes/kubelet.conf.d"
	// ContainerdRegistryConfigPath is containerd's registry config_path (a hosts.toml per
	// registry), as kubeadm's container runtime docs recommend.
	ContainerdRegistryConfigPath = "/etc/containerd/certs.d"
	// CNIConfDir is where a CNI plugin's installer leaves the pod network, containerd's default.
	CNIConfDir = "/etc/cni/net.d"
)

// kubeadmNode is what the kubeadm file set of one node depends on.
type kubeadmNode struct {
	// NodeIP is the node's address: each dev kubelet listens on its own (one network namespace).
	NodeIP string
	// APIServerURL and CA are the cluster's (kubeadm join's discovery); Token the bootstrap token
	// (<id>.<secret>) the node joins with.
	APIServerURL string
	CA           []byte
	Token        string
	// CNI is the pod network's configuration list (the CNI plugin's).
	CNI string
	// ClusterDNS is the kubelet's clusterDNS, the network's (devnet.Layout.ClusterDNS).
	ClusterDNS netip.Addr
}

// kubeadmFiles is what `kubeadm join` (and the admin's node preparation before it, as kubeadm's
// docs ask for) leaves on a node of the distribution image, before the kubelet first starts:
// containerd's configuration, the kubelet's configuration and flags, its bootstrap kubeconfig
// and the cluster CA, the admin's KUBELET_EXTRA_ARGS adding --config-dir (empty), and the pod
// network. The kubelet writes kubelet.conf itself once its client certificate is signed.
func kubeadmFiles(n kubeadmNode) (machine.FileSet, error) {
	bootstrap, err := bootstrapKubeconfig(n.APIServerURL, n.CA, n.Token)
	if err != nil {
		return machine.FileSet{}, err
	}
	set := machine.FileSet{
		Dirs: []machine.Dir{
			{Path: KubeletConfigDir, Mode: 0o755},
			{Path: "/etc/kubernetes/manifests", Mode: 0o755},
			{Path: ContainerdRegistryConfigPath, Mode: 0o755},
		},
		Files: []machine.File{
			{Path: "/etc/containerd/config.toml", Mode: 0o644, Content: containerdConfFor(CNIConfDir, ContainerdRegistryConfigPath)},
			{Path: path.Join(CNIConfDir, "10-mco-dev.conflist"), Mode: 0o644, Content: n.CNI},
			{Path: KubeadmCAPath, Mode: 0o644, Content: string(n.CA)},
			{Path: KubeadmBootstrapKubeconfig, Mode: 0o600, Content: string(bootstrap)},
			{Path: KubeadmKubeletConfigPath, Mode: 0o644, Content: kubeletConfigYAML(n.NodeIP, n.NodeIP, containerdEndpoint, n.ClusterDNS)},
			{Path: KubeadmInstanceConfigPath, Mode: 0o644, Content: fmt.Sprintf("containerRuntimeEndpoint: %q\n", containerdEndpoint)},
			{Path: KubeadmFlagsPath, Mode: 0o644, Content: fmt.Sprintf("KUBELET_KUBEADM_ARGS=%q\n", "--node-ip="+n.NodeIP)},
			{Path: KubeletDefaultsPath, Mode: 0o644, Content: "KUBELET_EXTRA_ARGS=--config-dir=" + KubeletConfigDir + "\n"},
		},
	}
	return set, set.Validate()
}

const containerdEndpoint = "unix:///run/containerd/containerd.sock"

// kubeletConfigYAML is the KubeletConfiguration as kubeadm v1.36 marshals it (every field it
// defaults, sorted) from the dev cluster's settings: cgroup v1 allowed (the dev host is
// hybrid), swap allowed, eviction thresholds for small disks, no image GC. With address ""
// it is what kubeadm uploads as ConfigMap kube-system/kubelet-config; a node's
// /var/lib/kubelet/config.yaml adds its per-node patch (address, healthzBindAddress: see
// testdata/kubeadm/patches) and its instance configuration (containerRuntimeEndpoint).
func kubeletConfigYAML(address, healthzBindAddress, runtimeEndpoint string, clusterDNS netip.Addr) string {
	head := ""
	if address != "" {
		head = "address: " + address + "\n"
	}
	endpoint := runtimeEndpoint
	if endpoint == "" {
		endpoint = `""`
	}
	return head + `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: ` + KubeadmCAPath + `
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- ` + clusterDNS.String() + `
clusterDomain: cluster.local
containerRuntimeEndpoint: ` + endpoint + `
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
evictionHard:
  imagefs.available: 1%
  memory.available: 100Mi
  nodefs.available: 1%
evictionPressureTransitionPeriod: 0s
failCgroupV1: false
failSwapOn: false
fileCheckFrequency: 0s
healthzBindAddress: ` + healthzBindAddress + `
healthzPort: 10248
httpCheckFrequency: 0s
imageGCHighThresholdPercent: 100
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
`
}

// bootstrapKubeconfig is /etc/kubernetes/bootstrap-kubelet.conf as `kubeadm join` writes it:
// the cluster from discovery, the bootstrap token as user tls-bootstrap-token-user.
func bootstrapKubeconfig(apiServerURL string, ca []byte, token string) ([]byte, error) {
	if apiServerURL == "" || len(ca) == 0 || token == "" {
		return nil, fmt.Errorf("bootstrap kubeconfig: API server URL, CA and token are all needed")
	}
	const cluster, user = "kubernetes", "tls-bootstrap-token-user"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: apiServerURL, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[user+"@"+cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user}
	cfg.CurrentContext = user + "@" + cluster
	return clientcmd.Write(*cfg)
}
