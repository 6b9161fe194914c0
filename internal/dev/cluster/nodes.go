package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/dev/machine/metadata"
	"github.com/mco-dev/mco/internal/protocol"
)

// MachineLabel marks the dev cluster's Nodes; the platform metadata gives it to each machine.
const MachineLabel = "mco.dev/machine"

// BootImage is the OS image every dev machine first boots: the host's OS plus the mco binary.
const BootImage = "mco-dev.local/os:1"

// NodeBinary is the node build of mco beside mco (bin/mco-node: agent, first boot, dev
// platform facts), which the dev OS image carries.
func NodeBinary(mco string) (string, error) {
	node := filepath.Join(filepath.Dir(mco), "mco-node")
	if _, err := os.Stat(node); err != nil {
		return "", fmt.Errorf("the node build of mco is missing (%w): run `make build`", err)
	}
	return node, nil
}

// BuildNodeImage adds the dev OS image ref to the cluster in dir: the host's OS plus the node
// build of mco beside mco (first boot, platform facts), the kubelet and containerd from the cluster's tools (nodeTools),
// and, preloaded, the pod sandbox image and mco's own image.
func BuildNodeImage(dir, ref, mco string, st *State) error {
	toolsDir := st.ToolsDir
	node, err := NodeBinary(mco)
	if err != nil {
		return err
	}
	files := map[string]string{machine.MCOPath: node, NodeImagesDir + "/mco.tar": st.ImageArchive}
	for path, tool := range nodeTools {
		files[path] = filepath.Join(toolsDir, tool)
		if _, err := os.Stat(files[path]); err != nil {
			return fmt.Errorf("%s is missing (%w): run `make tools`", tool, err)
		}
	}
	pause, err := pauseArchive(dir, toolsDir)
	if err != nil {
		return err
	}
	files[NodeImagesDir+"/pause.tar"] = pause
	return machine.BuildImageWith(ImagesDir(dir), ref, machine.Content{HostFiles: files})
}

// nodeTools are the binaries the dev OS image takes from the cluster's tools (`make tools`), path
// in the image → name in the tools directory: the kubelet, and containerd at the version
// hack/tools/containerd pins over the host's package (Debian 12's containerd 1.6 cannot pin
// images for the kubelet's image garbage collection, which PinnedImageSets need; 1.7 can). The
// package's unit and runc stay the host's.
var nodeTools = map[string]string{
	KubeletPath:                        "kubelet",
	"/usr/bin/containerd":              "containerd",
	"/usr/bin/containerd-shim-runc-v2": "containerd-shim-runc-v2",
	"/usr/bin/ctr":                     "ctr",
}

// MachineDir is the directory of the dev machine name.
func MachineDir(dir, name string) string { return filepath.Join(dir, "machines", name) }

// ImagesDir is the dev cluster's OS image registry.
func ImagesDir(dir string) string { return filepath.Join(dir, "images") }

// addNode creates a machine for pool and starts its supervisor. In the OpenShift layout the
// machine boots the way a cloud machine does (Ignition follows the pool's managed pointer config
// to the server before systemd starts), then its own units register the Node and run the agent;
// in the kubeadm layout it boots a distribution image with what `kubeadm join` leaves on a node.
func (s *State) addNode(ctx context.Context, c client.Client, dir, toolsDir, mco, name, pool string) error {
	if s.ClusterLayout() == LayoutKubeadm {
		return s.addKubeadmNode(ctx, c, dir, mco, name)
	}
	if err := BuildNodeImage(dir, BootImage, mco, s); err != nil {
		return fmt.Errorf("building the dev OS image: %w", err)
	}
	pointer, err := waitPointer(ctx, c, pool)
	if err != nil {
		return err
	}
	return s.createMachine(dir, mco, name, func(cfg *machine.Config) error {
		cfg.Image, cfg.Provision, cfg.Ignition = BootImage, machine.ProvisionIgnition, filepath.Join(toolsDir, "ignition")
		cfg.Metadata.Labels = kubeletLabels()
		return os.WriteFile(filepath.Join(cfg.Dir, machine.UserDataFile), pointer, 0o600)
	})
}

// createMachine makes machine name with its addresses (by its place in the cluster: stable over
// its reboots), lets provision choose its image and first-boot contents, and starts its
// supervisor.
func (s *State) createMachine(dir, mco, name string, provision func(*machine.Config) error) error {
	mdir := MachineDir(dir, name)
	if _, err := os.Stat(mdir); err == nil {
		return fmt.Errorf("machine %s already exists at %s", name, mdir)
	}
	layout, index := s.Network(), len(s.Machines)
	if index >= layout.MaxMachines() {
		return fmt.Errorf("the dev network has addresses for %d machines", layout.MaxMachines())
	}
	cfg := machine.Config{
		Name: name, Dir: mdir, ImagesDir: ImagesDir(dir), MCO: mco,
		Hide: []string{dir},
		// Room for container images (containerd's native snapshotter copies each layer); the
		// disk file is sparse, so only what is written takes space.
		DiskSize: 4 << 30,
		Metadata: metadata.Metadata{Name: name,
			NodeIP: layout.NodeAddr(index).String(), PodCIDR: layout.PodCIDR(index).String(), PodBridge: layout.PodBridge(index)},
		Network: &machine.Network{Link: layout.MachineLink(index),
			Addr: layout.NodeAddr(index), Gateway: layout.HostAddr(), PodNet: layout.PodCIDR(index)},
	}
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return err
	}
	if err := provision(&cfg); err != nil {
		return err
	}
	if err := cfg.Save(); err != nil {
		return err
	}
	s.Machines = append(s.Machines, name)
	return s.start(dir, machineProcess(name), mco, "dev", "machine", "supervise", "--dir", mdir)
}

// machineProcessPrefix names a machine's supervisor among the cluster's processes.
const machineProcessPrefix = "machine-"

func machineProcess(name string) string { return machineProcessPrefix + name }

// kubeletLabels are the labels a machine's kubelet registers its Node with: the ones a kubelet
// may set on its own Node (the role label is the installer's, see labelRoles).
func kubeletLabels() map[string]string { return map[string]string{MachineLabel: ""} }

// waitPointer returns the pool's managed pointer config once the user-data controller wrote it.
func waitPointer(ctx context.Context, c client.Client, pool string) ([]byte, error) {
	key := client.ObjectKey{Namespace: MachineAPINamespace, Name: protocol.ManagedUserDataSecretName(pool)}
	var sec corev1.Secret
	if poll(ctx, time.Minute, func() bool { return c.Get(ctx, key, &sec) == nil && len(sec.Data[protocol.UserDataKey]) > 0 }) == nil {
		return sec.Data[protocol.UserDataKey], nil
	}
	return nil, fmt.Errorf("secret %s never appeared; is the controller running? (kubectl -n "+ServerNamespace+" logs deployment/mco-controller, or logs/"+BootstrapControllerProcess+".log before the hand-over)", key)
}
