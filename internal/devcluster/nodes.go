package devcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/ignitionclient"
	"github.com/mco-dev/mco/internal/protocol"
)

// SimulatedNodeLabel marks the dev cluster's Nodes.
const SimulatedNodeLabel = "mco.dev/simulated"

// baseRoot is what a freshly installed OS image has that Ignition and the agent rely on: the
// account databases (with the core user, as on CoreOS) and core's home.
var baseRoot = map[string]string{
	"etc/passwd":  "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/home/core:/bin/bash\n",
	"etc/group":   "root:x:0:\nwheel:x:10:core\ncore:x:1000:\n",
	"etc/shadow":  "root:*:19000:0:99999:7:::\ncore:*:19000:0:99999:7:::\n",
	"etc/gshadow": "root:*::\nwheel:::core\ncore:!::\n",
}

func nodeRoot(dir, name string) string { return filepath.Join(dir, "nodes", name, "root") }

// addNode provisions a machine for pool the way a cloud machine boots: the real Ignition client
// follows the pool's managed pointer config to the running server and writes the pool's config
// into a fresh root. Then the Node is registered Ready and its agent started; the agent seeds its
// annotations from the node-annotations file the server served, so it starts Done.
func (s *State) addNode(ctx context.Context, c client.Client, dir, toolsDir, mco, name, pool string) error {
	root := nodeRoot(dir, name)
	if _, err := os.Stat(root); err == nil {
		return fmt.Errorf("node %s already exists at %s", name, root)
	}
	for path, content := range baseRoot {
		if err := writeUnder(root, path, content); err != nil {
			return err
		}
	}
	// Ignition writes core's SSH keys with core's own credentials, so every directory above
	// its home must be traversable by others, as on a real disk.
	if err := os.MkdirAll(filepath.Join(root, "home"), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(root, "home", "core"), 0o700); err != nil {
		return err
	}
	if err := os.Chown(filepath.Join(root, "home", "core"), 1000, 1000); err != nil {
		return err
	}
	pointer, err := waitPointer(ctx, c, pool)
	if err != nil {
		return err
	}
	out, err := ignitionclient.Run(ctx, filepath.Join(toolsDir, "ignition"), pointer, root, filepath.Join(dir, "nodes", name, "ignition"))
	logPath := filepath.Join(dir, "logs", "ignition-"+name+".log")
	_ = os.WriteFile(logPath, []byte(out), 0o644)
	if err != nil {
		return fmt.Errorf("provisioning %s: %w (see %s)", name, err, logPath)
	}
	if err := firstBoot(ctx, root); err != nil {
		return fmt.Errorf("first boot of %s: %w", name, err)
	}
	if err := registerNode(ctx, c, name, pool); err != nil {
		return err
	}
	return s.start(dir, "daemon-"+name, mco, "daemon", "--node", name, "--root", root,
		"--kubeconfig", filepath.Join(dir, "kubeconfig"), "--metrics-bind-address", "0", "--simulated-reboot")
}

// firstBoot does what systemd does when a provisioned machine first boots: Ignition records unit
// enablement as presets, and systemd applies them, creating the enablement symlinks the agent
// later verifies.
func firstBoot(ctx context.Context, root string) error {
	out, err := exec.CommandContext(ctx, "systemctl", "--root="+root, "preset-all").CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl --root %s preset-all: %w: %s", root, err, out)
	}
	return nil
}

// waitPointer returns the pool's managed pointer config once the user-data controller wrote it.
func waitPointer(ctx context.Context, c client.Client, pool string) ([]byte, error) {
	deadline := time.Now().Add(time.Minute)
	key := client.ObjectKey{Namespace: MachineAPINamespace, Name: protocol.ManagedUserDataSecretName(pool)}
	for time.Now().Before(deadline) {
		var sec corev1.Secret
		if err := c.Get(ctx, key, &sec); err == nil && len(sec.Data[protocol.UserDataKey]) > 0 {
			return sec.Data[protocol.UserDataKey], nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("secret %s never appeared; is the controller running? (see logs/controller.log)", key)
}

// registerNode creates the Node as a kubelet would: role labels for its pool (custom pools'
// nodes are workers too) and a Ready condition, which nothing takes away in the dev cluster
// except a simulated reboot.
func registerNode(ctx context.Context, c client.Client, name, pool string) error {
	labels := map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"node-role.kubernetes.io/" + pool: "", SimulatedNodeLabel: "",
	}
	if pool != protocol.MasterPool {
		labels[protocol.WorkerRoleLabel] = ""
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("registering node %s: %w", name, err)
	}
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated node",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}
	return c.Status().Update(ctx, node)
}

func writeUnder(root, rel, content string) error {
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
