package cluster

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/dev/machine"
)

// DistroImage is the OS image of the kubeadm layout's machines: a distribution's, with the
// Kubernetes packages installed and nothing of mco (no first-boot service, no mco binary).
const DistroImage = "mco-dev.local/distro:1"

// The Kubernetes packages' unit files (kubernetes/release's templates; testdata/kubeadm).
const (
	kubeletPackageUnitPath = "/usr/lib/systemd/system/kubelet.service"
	kubeletPackageUnit     = `[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`
	kubeadmKubeletDropIn = `# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=` + KubeadmBootstrapKubeconfig + ` --kubeconfig=` + KubeadmKubeconfig + `"
Environment="KUBELET_CONFIG_ARGS=--config=` + KubeadmKubeletConfigPath + `"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-` + KubeadmFlagsPath + `
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-` + KubeletDefaultsPath + `
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`
)

// Files a distribution ships that mco does not write: a MachineConfig may replace them, nothing
// else may (the kubeadm e2e checks chrony.conf is untouched by the install).
const (
	DistroChronyConf = `# Use public servers from the pool.ntp.org project.
# Please consider joining the pool (https://www.pool.ntp.org/join.html).
pool 2.distro.pool.ntp.org iburst

# Record the rate at which the system clock gains/losses time.
driftfile /var/lib/chrony/drift

# Allow the system clock to be stepped in the first three updates
# if its offset is larger than 1 second.
makestep 1.0 3

# Enable kernel synchronization of the real-time clock (RTC).
rtcsync

# Specify directory for log files.
logdir /var/log/chrony
`
	distroSSHDropInPath = "/etc/ssh/sshd_config.d/50-distro.conf"
	distroSSHDropIn     = `# The distribution's defaults; local changes belong in a file of their own.
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding no
PrintMotd no
AcceptEnv LANG LC_*
`
)

// distroContent is what the distribution image adds to the host's OS: the kubelet package (its
// unit, enabled; /etc/default/kubelet as shipped; kubeadm's drop-in at the path of kubeadm's
// manual install), containerd enabled as its package enables it, the distribution's own files,
// and the dev platform's preload of the pod sandbox and mco images (as a node image preloads
// them, or `ctr images import` on each node), which only containerd needs.
func distroContent(kubelet, pauseArchive, mcoArchive string) machine.Content {
	wants := "/etc/systemd/system/multi-user.target.wants/"
	return machine.Content{
		HostFiles: map[string]string{KubeletPath: kubelet, NodeImagesDir + "/pause.tar": pauseArchive, NodeImagesDir + "/mco.tar": mcoArchive},
		Files: map[string]string{
			kubeletPackageUnitPath:              kubeletPackageUnit,
			KubeadmKubeletDropInPath:            kubeadmKubeletDropIn,
			KubeletDefaultsPath:                 "KUBELET_EXTRA_ARGS=\n",
			"/etc/systemd/system/" + ImagesUnit: baseUnits[ImagesUnit],
			"/etc/chrony.conf":                  DistroChronyConf,
			distroSSHDropInPath:                 distroSSHDropIn,
		},
		Links: map[string]string{
			wants + KubeletUnit:          kubeletPackageUnitPath,
			wants + "containerd.service": "/usr/lib/systemd/system/containerd.service",
			wants + ImagesUnit:           "/etc/systemd/system/" + ImagesUnit,
		},
	}
}

// buildDistroImage adds the distribution image to the cluster in dir, unless it exists.
func buildDistroImage(dir string, st *State) error {
	kubelet := filepath.Join(st.ToolsDir, "kubelet")
	if _, err := os.Stat(kubelet); err != nil {
		return fmt.Errorf("the kubelet is missing (%w): run `make tools`", err)
	}
	pause, err := pauseArchive(dir, st.ToolsDir)
	if err != nil {
		return err
	}
	return machine.BuildImageWith(ImagesDir(dir), DistroImage, distroContent(kubelet, pause, st.ImageArchive))
}

// pauseArchive writes the pod sandbox image into the cluster's images once and returns it.
func pauseArchive(dir, toolsDir string) (string, error) {
	pause := filepath.Join(ImagesDir(dir), "pause.tar")
	if _, err := os.Stat(pause); err == nil {
		return pause, nil
	}
	if err := os.MkdirAll(ImagesDir(dir), 0o755); err != nil {
		return "", err
	}
	if err := image.WritePause(filepath.Join(toolsDir, "pause"), pause, image.PauseRef); err != nil {
		return "", fmt.Errorf("the pod sandbox image (is %s/pause built? run `make tools`): %w", toolsDir, err)
	}
	return pause, nil
}
