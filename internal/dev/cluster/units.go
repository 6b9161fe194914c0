package cluster

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	goruntime "runtime"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/dev/machine/metadata"
	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/protocol"
)

// Units every dev machine gets from its pool's base MachineConfig, the way OpenShift's
// templates lay down machine-config-daemon-firstboot.service, the kubelet and the container
// runtime's configuration: the platform facts (the machine's addresses, from its metadata) and
// the preloaded images (the pod sandbox's, mco's own) come first, the first-boot service
// (kernel arguments, OS image) runs before the kubelet, which joins the cluster with the
// bootstrap kubeconfig the server served. The agent is not a unit: it is config/default's
// DaemonSet, a pod from mco's image managing the machine through /rootfs.
const (
	PlatformUnit  = "mco-dev-platform.service"
	ImagesUnit    = "mco-dev-images.service"
	FirstBootUnit = "mco-firstboot.service"
	KubeletUnit   = "kubelet.service"
)

// Where the node's images and binaries are; the dev OS image carries them.
const (
	KubeletPath   = "/usr/bin/kubelet"
	NodeImagesDir = "/usr/lib/mco-dev/images"
)

var baseUnits = map[string]string{
	PlatformUnit: `[Unit]
Description=mco dev platform: the machine's addresses and credentials from its metadata (afterburn's part on a cloud)
DefaultDependencies=no
After=local-fs.target
Before=containerd.service ` + KubeletUnit + `

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + machine.MCOPath + ` dev platform-facts

[Install]
WantedBy=multi-user.target
`,
	ImagesUnit: `[Unit]
Description=Load the images the OS image carries into containerd (the pod sandbox's and mco's, as a node image preloads them), once per archive
Requires=containerd.service
After=containerd.service
Before=` + KubeletUnit + `

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for f in ` + NodeImagesDir + `/*.tar; do \
  stamp=/var/lib/mco-dev/imported/$$(basename "$$f").$$(stat -Lc %%s-%%Y "$$f"); [ -e "$$stamp" ] && continue; \
  ctr -n k8s.io images import --snapshotter native "$$f" && mkdir -p /var/lib/mco-dev/imported && touch "$$stamp" || exit 1; done'

[Install]
WantedBy=multi-user.target
`,
	FirstBootUnit: `[Unit]
Description=mco first boot: apply what Ignition cannot (kernel arguments, OS image), reboot once if needed
ConditionPathExists=!/etc/machine-config-daemon/firstboot-done
Before=` + KubeletUnit + `

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + machine.MCOPath + ` daemon firstboot

[Install]
WantedBy=multi-user.target
`,
	KubeletUnit: `[Unit]
Description=Kubernetes kubelet
Requires=containerd.service
Wants=` + PlatformUnit + ` ` + ImagesUnit + `
After=containerd.service ` + PlatformUnit + ` ` + ImagesUnit + ` ` + FirstBootUnit + `

[Service]
EnvironmentFile=` + metadata.KubeletEnvPath + `
ExecStart=` + KubeletPath + ` --config=` + kubeletconfig.KubeletConfPath + ` --config-dir=` + metadata.KubeletDropInDir + ` \
  --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig --kubeconfig=/var/lib/kubelet/kubeconfig \
  --node-ip=${NODE_IP} --node-labels=${NODE_LABELS}
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`,
}

// kubeletConf is the pool's kubelet configuration, as OpenShift's templates write
// /etc/kubernetes/kubelet.conf; a KubeletConfig is merged over it. The dev machines' host is
// cgroup v1 or hybrid (failCgroupV1: false), its kernel settings are not the kubelet's to
// tune (the machines present the values it checks), and each machine's address comes from the
// platform's drop-in. A crashed container (the agent's, killed by the chaos suite) restarts
// within 5 s, not after a back-off growing to 5 minutes: on a node whose OS mco manages, its
// agent is worth restarting promptly. Graceful node shutdown: see gracefulShutdown.
const kubeletConf = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/kubelet-ca.crt
authorization:
  mode: Webhook
cgroupDriver: systemd
failCgroupV1: false
cgroupsPerQOS: true
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
clusterDNS:
- CLUSTER_DNS
clusterDomain: cluster.local
readOnlyPort: 0
failSwapOn: false
rotateCertificates: true
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
staticPodPath: /etc/kubernetes/manifests
crashLoopBackOff:
  maxContainerRestartPeriod: 5s
`

// gracefulShutdown is what OpenShift's templates give masters' kubelets (90 s, 60 s of it for
// critical pods); workers have none, as there: a worker's pods, the agent's DaemonSet pod
// among them, are not ended and replaced on each reboot (the DaemonSet controller's back-off
// for failed pods would delay the agent more after every reboot), they restart in place.
const gracefulShutdown = `shutdownGracePeriod: 90s
shutdownGracePeriodCriticalPods: 60s
`

// kubeletConfFor is role's kubelet configuration on the network whose cluster DNS address
// (inside its blackholed Service range) is clusterDNS.
func kubeletConfFor(role string, clusterDNS netip.Addr) string {
	conf := strings.Replace(kubeletConf, "CLUSTER_DNS", clusterDNS.String(), 1)
	if role == protocol.MasterPool {
		return conf + gracefulShutdown
	}
	return conf
}

// containerdConf is containerd's configuration in the OpenShift layout, for the containerd the
// dev OS image carries (nodeTools: 2.x), in its own schema (version 3): the pods' network from
// the platform's CNI file, registry hosts from ContainerdRegistryConfigPath (one directory: 2.x
// pulls for the kubelet through its transfer service, which reads only one), the pod sandbox
// image pinned, and, as in containerdConfFor, the native snapshotter and restrict_oom_score_adj.
// The transfer service unpacks into the native snapshotter too: `ctr images import` (the
// preloads, ImagesUnit) goes through it, and it refuses a snapshotter it has no platform for.
var containerdConf = `version = 3
root = "/var/lib/containerd"
state = "/run/containerd"
[plugins]
  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "native"
    [plugins."io.containerd.cri.v1.images".pinned_images]
      sandbox = "` + image.PauseRef + `"
    [plugins."io.containerd.cri.v1.images".registry]
      config_path = "` + ContainerdRegistryConfigPath + `"
  [plugins."io.containerd.cri.v1.runtime"]
    restrict_oom_score_adj = true
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
          SystemdCgroup = true
    [plugins."io.containerd.cri.v1.runtime".cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "` + metadata.CNIConfDir + `"
  [plugins."io.containerd.transfer.v1.local"]
    [[plugins."io.containerd.transfer.v1.local".unpack_config]]
      platform = "linux/` + goruntime.GOARCH + `"
      snapshotter = "native"
`

// containerdConfFor is containerd's configuration in the kubeadm layout, for the distribution's
// own containerd (Debian 12's 1.6): version 2 schema, the pods' network in cniConfDir and,
// unless "", registry hosts in registryConfigPath. The native snapshotter because an overlayfs
// upper directory cannot live on the machine's overlay root; restrict_oom_score_adj because the
// dev host gives no CAP_SYS_RESOURCE for negative scores.
func containerdConfFor(cniConfDir, registryConfigPath string) string {
	conf := `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "` + image.PauseRef + `"
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "native"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = true
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "` + cniConfDir + `"
`
	if registryConfigPath != "" {
		conf += `    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "` + registryConfigPath + `"
`
	}
	return conf
}

// baseConfig plays OpenShift's template controller: every role starts with one MachineConfig, so
// a pool renders before an admin adds anything. It records what the node is, like
// /etc/os-release records the OS, and lays down the machine's node units and the kubelet's and
// container runtime's configuration.
func baseConfig(role string, network devnet.Layout) *mcfgv1.MachineConfig {
	type unit struct {
		Name     string `json:"name"`
		Enabled  bool   `json:"enabled"`
		Contents string `json:"contents"`
	}
	type file struct {
		Path     string         `json:"path"`
		Mode     int            `json:"mode"`
		Contents map[string]any `json:"contents"`
	}
	var units []unit
	for _, name := range []string{PlatformUnit, ImagesUnit, FirstBootUnit, KubeletUnit} {
		units = append(units, unit{Name: name, Enabled: true, Contents: baseUnits[name]})
	}
	inline := func(path, content string) file {
		return file{Path: path, Mode: 0o644, Contents: map[string]any{"source": "data:," + url.PathEscape(content)}}
	}
	cfg := map[string]any{
		"ignition": map[string]any{"version": "3.4.0"},
		"storage": map[string]any{
			// The kubelet's static pod directory (staticPodPath), as OpenShift's templates make it.
			"directories": []map[string]any{{"path": "/etc/kubernetes/manifests", "mode": 0o755}},
			"files": []file{
				inline("/etc/mco-dev/role", "MCO_DEV_CLUSTER=1\nMCO_ROLE="+role+"\n"),
				inline(kubeletconfig.KubeletConfPath, kubeletConfFor(role, network.ClusterDNS())),
				inline("/etc/containerd/config.toml", containerdConf),
			},
		},
		"systemd": map[string]any{"units": units},
	}
	raw, _ := json.Marshal(cfg)
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "00-" + role, Labels: map[string]string{protocol.RoleLabel: role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}

// AgentLogsScript prints, inside a machine, the last n lines of the agent pod's containers'
// logs (the kubelet keeps them in /var/log/pods, so a restarted container's are there too).
func AgentLogsScript(n int) string {
	return fmt.Sprintf(`tail -q -n %d /var/log/pods/openshift-machine-config-operator_mco-daemon-*/daemon/*.log 2>/dev/null | cut -d' ' -f4-`, n)
}
