package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/scheme"
)

// upKubeadm builds the kubeadm layout on a running control plane: what `kubeadm init` sets up
// for joining nodes, then the control-plane machine and the workers, all booting at once (no
// machine waits for mco: none boots from it), each a distribution image with what `kubeadm
// join` leaves on a node; once their Nodes are Ready (master-0 marked as kubeadm marks a control
// plane), mco is installed as README's "Install on a kubeadm cluster" says, unless NoInstall.
func upKubeadm(ctx context.Context, opts Options, dir string, st *State, c client.Client) error {
	logf(opts.Log, "setting up what kubeadm init leaves for joining nodes: bootstrap-token RBAC, kube-system/%s", kubeletConfigMap)
	for _, obj := range kubeadmClusterObjects(st.Network()) {
		if err := createIfMissing(ctx, c, obj); err != nil {
			return err
		}
	}
	names := []string{ControlPlaneMachine}
	for i := range opts.Nodes {
		names = append(names, freeNameAmong(dir, opts.NodePools[i%len(opts.NodePools)], names))
	}
	for _, name := range names {
		logf(opts.Log, "booting machine %s: the distribution image (%s), kubelet and containerd as kubeadm join leaves them, no Ignition", name, DistroImage)
		if err := st.addKubeadmNode(ctx, c, dir, opts.MCO, name); err != nil {
			return err
		}
	}
	logf(opts.Log, "waiting for every kubelet to join (bootstrap token, CSR approved) and its Node to be Ready")
	if err := st.waitNodes(ctx, c, dir, names, 3*time.Minute); err != nil {
		return err
	}
	if err := finishKubeadmJoins(ctx, dir, names); err != nil {
		return err
	}
	if err := st.pointAPIIntAtControlPlane(ctx, c, dir); err != nil {
		return err
	}
	if opts.NoInstall {
		return nil
	}
	logf(opts.Log, "installing mco as README's kubeadm install says: kubectl apply --server-side -k of config/crd, then of an overlay of %s", st.Manifests)
	return InstallMCO(ctx, dir)
}

// addKubeadmNode makes a machine of the distribution image whose first boot writes what
// `kubeadm join` leaves, with a bootstrap token of its own (as `kubeadm token create` makes
// one per join).
func (s *State) addKubeadmNode(ctx context.Context, c client.Client, dir, mco, name string) error {
	if err := buildDistroImage(dir, s); err != nil {
		return fmt.Errorf("building the distribution image: %w", err)
	}
	ca, err := os.ReadFile(pki{dir: filepath.Join(dir, "pki")}.path("ca.crt"))
	if err != nil {
		return err
	}
	token, err := newBootstrapToken()
	if err != nil {
		return err
	}
	if err := c.Create(ctx, bootstrapTokenSecret(token, time.Now().Add(bootstrapTokenTTL))); err != nil {
		return fmt.Errorf("bootstrap token for %s: %w", name, err)
	}
	return s.createMachine(dir, mco, name, func(cfg *machine.Config) error {
		cni, err := cfg.Metadata.CNIConfig()
		if err != nil {
			return err
		}
		files, err := kubeadmFiles(kubeadmNode{NodeIP: cfg.Metadata.NodeIP, APIServerURL: s.APIServerURL, CA: ca, Token: token.String(), CNI: cni, ClusterDNS: s.Network().ClusterDNS()})
		if err != nil {
			return fmt.Errorf("machine %s: %w", name, err)
		}
		cfg.Image, cfg.Provision = DistroImage, machine.ProvisionFiles
		return machine.WriteFileSet(cfg.Dir, files)
	})
}

// kubeadmState is the state of the kubeadm layout's cluster in dir (made absolute).
func kubeadmState(dir string) (string, *State, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	st, err := LoadState(dir)
	if err != nil {
		return "", nil, err
	}
	if st.ClusterLayout() != LayoutKubeadm {
		return "", nil, fmt.Errorf("the %s layout's cluster in %s installs mco itself (mco dev up)", st.ClusterLayout(), dir)
	}
	return dir, st, nil
}

func installCRDs(ctx context.Context, kubectl, kubeconfig, manifests string) error {
	for _, args := range [][]string{
		{"apply", "--server-side", "-k", filepath.Join(manifests, "..", "crd")},
		{"wait", "--for", "condition=established", "--timeout=60s", "crd", "--all"},
	} {
		if out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// finishKubeadmJoins does what `kubeadm join` does last once the kubelet wrote its own
// kubeconfig (its client certificate signed): it deletes the bootstrap kubeconfig, so the
// token's credential is not left on the node.
func finishKubeadmJoins(ctx context.Context, dir string, machines []string) error {
	for _, name := range machines {
		script := fmt.Sprintf("test -s %s && rm -f %s", KubeadmKubeconfig, KubeadmBootstrapKubeconfig)
		if _, err := machine.Output(ctx, MachineDir(dir, name), "sh", "-c", script); err != nil {
			return fmt.Errorf("machine %s: the kubelet has no kubeconfig of its own yet: %w", name, err)
		}
	}
	return nil
}

// InstallMCO installs mco on the kubeadm layout's cluster in dir as an admin installs it
// (README's "Install on a kubeadm cluster"): the CRDs first (`kubectl apply --server-side -k
// config/crd`, waited for), then the dev overlay of config/kubeadm (the image's tag and the two
// install settings). It returns once the controller, server and agent pods are Ready and the
// server's pod serves where api-int leads (mco dev up pointed it at the control-plane machine).
func InstallMCO(ctx context.Context, dir string) error {
	dir, st, err := kubeadmState(dir)
	if err != nil {
		return err
	}
	kubeconfig, kubectl := filepath.Join(dir, "kubeconfig"), filepath.Join(st.ToolsDir, "kubectl")
	if err := installCRDs(ctx, kubectl, kubeconfig, st.Manifests); err != nil {
		return err
	}
	if err := installMCO(ctx, dir, kubectl, kubeconfig, st.Manifests, st.ImageArchive, st.ServerHost(), st.APIServerURL, st.Network()); err != nil {
		return err
	}
	c, _, err := scheme.NewClient(kubeconfig)
	if err != nil {
		return err
	}
	if err := waitMCOPods(ctx, c, len(st.Machines), 3*time.Minute); err != nil {
		return err
	}
	target, err := controlPlaneServer(ctx, c)
	if err != nil {
		return err
	}
	if err := poll(ctx, time.Minute, func() bool { return serves(target) }); err != nil {
		return fmt.Errorf("the server's pod on %s does not serve on %s: %w (kubectl -n %s logs daemonset/mco-server)", ControlPlaneMachine, target, err, ServerNamespace)
	}
	return nil
}

// pointAPIIntAtControlPlane makes api-int what a kubeadm cluster's load balancer is before mco
// is installed: new connections to its port 22623 go to the control-plane machine, where the
// server's DaemonSet pod will listen. The install settings (mco dev status) can then name it.
func (s *State) pointAPIIntAtControlPlane(ctx context.Context, c client.Client, dir string) error {
	target, err := controlPlaneServer(ctx, c)
	if err != nil {
		return err
	}
	if err := devnet.PointAPIInt(s.Network(), target); err != nil {
		return err
	}
	s.ServerURL = "https://" + s.ServerHost()
	return s.save(dir)
}

// controlPlaneServer is where the server's pod on the control-plane machine listens.
func controlPlaneServer(ctx context.Context, c client.Client) (netip.AddrPort, error) {
	ip, err := nodeInternalIP(ctx, c, ControlPlaneMachine)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(ip, devnet.APIIntPort), nil
}

// waitMCOPods waits until config/default's workloads are Ready: the controller's Deployment,
// the server's DaemonSet on the control plane and the agent's on every one of nodes.
func waitMCOPods(ctx context.Context, c client.Client, nodes int, timeout time.Duration) error {
	var last string
	err := poll(ctx, timeout, func() bool {
		var d appsv1.Deployment
		var server, agent appsv1.DaemonSet
		if c.Get(ctx, client.ObjectKey{Namespace: ServerNamespace, Name: "mco-controller"}, &d) != nil ||
			c.Get(ctx, client.ObjectKey{Namespace: ServerNamespace, Name: "mco-server"}, &server) != nil ||
			c.Get(ctx, client.ObjectKey{Namespace: ServerNamespace, Name: "mco-daemon"}, &agent) != nil {
			last = "not all created"
			return false
		}
		last = fmt.Sprintf("controller %d/1 ready, server %d/%d, agents %d/%d", d.Status.ReadyReplicas,
			server.Status.NumberReady, server.Status.DesiredNumberScheduled, agent.Status.NumberReady, nodes)
		return d.Status.ReadyReplicas >= 1 && server.Status.DesiredNumberScheduled >= 1 &&
			server.Status.NumberReady == server.Status.DesiredNumberScheduled && int(agent.Status.NumberReady) == nodes
	})
	if err != nil {
		return fmt.Errorf("mco's pods are not Ready (%s): %w (kubectl -n %s get pods -o wide)", last, err, ServerNamespace)
	}
	return nil
}

// nodeInternalIP is the InternalIP Node name reports.
func nodeInternalIP(ctx context.Context, c client.Client, name string) (netip.Addr, error) {
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		return netip.Addr{}, err
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				return ip, nil
			}
		}
	}
	return netip.Addr{}, fmt.Errorf("Node %s reports no InternalIP", name)
}
