package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/scheme"
)

// Options for Up.
type Options struct {
	Dir string
	// Nodes is how many nodes to start, spread over NodePools in turn.
	Nodes     int
	NodePools []string
	// CustomPools are created besides master and worker (inheriting worker).
	CustomPools []string
	// ToolsDir holds etcd, kube-apiserver and ignition; MCO is the mco binary to run.
	ToolsDir, MCO string
	// Image is mco's container image archive (`make image`; default mco-image.tar beside MCO),
	// Manifests the install manifests (default the layout's: config/default, or config/kubeadm,
	// of the checkout MCO was built in).
	Image, Manifests string
	// Layout is how machines are built and mco comes onto them ("": OpenShift's).
	Layout Layout
	// NoInstall leaves a kubeadm layout's cluster without mco, for README's kubeadm install.
	NoInstall bool
	// NetworkSlot is which of the host's dev networks to use (devnet.Slot; 0, the default, is
	// the one README's commands show): clusters on different slots can run at once.
	NetworkSlot int
	Log         io.Writer
}

// Up starts a dev cluster in opts.Dir and returns when the pools are rendered, the server serves
// them and every node's agent reports Done.
func Up(ctx context.Context, opts Options) error {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	if st, err := LoadState(dir); err == nil && st.anyAlive() {
		return fmt.Errorf("a dev cluster is already running in %s; `mco dev down --dir %s` first", dir, dir)
	}
	for _, sub := range []string{"etcd", "nodes", "machines", "images"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	// Node roots live below dir and Ignition drops to the core user to write its SSH keys, so
	// dir must be traversable by others (its pki/ stays private).
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := checkTraversable(dir); err != nil {
		return err
	}
	if opts.NetworkSlot < 0 || opts.NetworkSlot >= devnet.Slots {
		return fmt.Errorf("network slot %d: want 0 to %d", opts.NetworkSlot, devnet.Slots-1)
	}
	network := devnet.Slot(opts.NetworkSlot)
	if err := network.Validate(); err != nil {
		return fmt.Errorf("network slot %d: %w", opts.NetworkSlot, err)
	}
	if raised, err := raiseHostLimits("/proc/sys"); err != nil {
		return err
	} else if raised != "" {
		logf(opts.Log, "%s", raised)
	}
	certs := pki{dir: filepath.Join(dir, "pki"), network: network}
	if err := certs.create(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	toolsDir, err := filepath.Abs(opts.ToolsDir)
	if err != nil {
		return err
	}
	layout, err := ParseLayout(string(opts.Layout))
	if err != nil {
		return err
	}
	if opts.NoInstall && layout != LayoutKubeadm {
		return fmt.Errorf("only the kubeadm layout's machines come up without mco: the OpenShift layout's boot from its server")
	}
	if len(opts.CustomPools) > 0 && layout == LayoutKubeadm {
		return fmt.Errorf("custom pools %v: a kubeadm layout's cluster has no pools before mco is installed; create them afterwards (README: Install on a kubeadm cluster)", opts.CustomPools)
	}
	archive, manifests, err := opts.install(layout)
	if err != nil {
		return err
	}
	st := &State{Layout: layout, Processes: map[string]Process{}, ToolsDir: toolsDir, ImageArchive: archive, Manifests: manifests,
		NetworkSlot: opts.NetworkSlot}
	logf(opts.Log, "starting etcd and kube-apiserver")
	apiURL, err := st.startControlPlane(ctx, dir, opts.ToolsDir, certs)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, apiURL, certs); err != nil {
		return err
	}
	c, _, err := scheme.NewClient(kubeconfig)
	if err != nil {
		return err
	}
	logf(opts.Log, "starting kube-controller-manager and kube-scheduler")
	if err := st.startControllers(dir, opts.ToolsDir, kubeconfig, certs); err != nil {
		return err
	}
	if layout == LayoutKubeadm {
		return upKubeadm(ctx, opts, dir, st, c)
	}
	logf(opts.Log, "installing CRDs, pools and MachineConfiguration cluster")
	if err := install(ctx, c, opts.CustomPools, st.Network()); err != nil {
		return err
	}
	logf(opts.Log, "starting the bootstrap controller on this host (until the control plane's pods take over)")
	if err := st.startBootstrapController(dir, opts.MCO, kubeconfig); err != nil {
		return err
	}
	logf(opts.Log, "installing mco from its image as README's Install says: kubectl apply --server-side -k of config/default")
	if err := installMCO(ctx, dir, filepath.Join(toolsDir, "kubectl"), kubeconfig, manifests, archive, st.ServerHost(), apiURL, st.Network()); err != nil {
		return err
	}
	logf(opts.Log, "starting the bootstrap Machine Config Server on this host, behind api-int %s", st.ServerHost())
	if err := st.startBootstrapServer(ctx, c, dir, opts.MCO, kubeconfig, apiURL); err != nil {
		return err
	}
	st.ServerURL = "https://" + st.ServerHost()
	if err := st.save(dir); err != nil {
		return err
	}
	logf(opts.Log, "waiting for kube-controller-manager to issue the node bootstrap token")
	if err := waitBootstrapToken(ctx, c); err != nil {
		return err
	}
	logf(opts.Log, "booting the control-plane machine %s (pool master) from the bootstrap server", ControlPlaneMachine)
	if err := st.addNode(ctx, c, dir, opts.ToolsDir, opts.MCO, ControlPlaneMachine, "master"); err != nil {
		return err
	}
	if err := st.waitNodes(ctx, c, dir, []string{ControlPlaneMachine}, 3*time.Minute); err != nil {
		return err
	}
	logf(opts.Log, "handing over: api-int to the server's pod on %s, the controller's pod takes the lead; the bootstrap processes stop", ControlPlaneMachine)
	if err := st.handOver(ctx, c, dir); err != nil {
		return err
	}
	for i := range opts.Nodes {
		pool := opts.NodePools[i%len(opts.NodePools)]
		name := freeName(dir, pool)
		logf(opts.Log, "booting machine %s (pool %s): Ignition from the pool's pointer config, then systemd", name, pool)
		if err := st.addNode(ctx, c, dir, opts.ToolsDir, opts.MCO, name, pool); err != nil {
			return err
		}
	}
	logf(opts.Log, "waiting for every machine to register its Node and report Done")
	return st.waitNodes(ctx, c, dir, st.Machines, 3*time.Minute)
}

// freeName is the first <pool>-<n> no machine of dir has.
func freeName(dir, pool string) string { return freeNameAmong(dir, pool, nil) }

// freeNameAmong is freeName, also skipping names chosen but not yet made.
func freeNameAmong(dir, pool string, taken []string) string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s-%d", pool, i)
		if _, err := os.Stat(MachineDir(dir, name)); errors.Is(err, os.ErrNotExist) && !slices.Contains(taken, name) {
			return name
		}
	}
}

// install resolves the image archive and the layout's install manifests, refusing what is
// missing.
func (o Options) install(layout Layout) (archive, manifests string, err error) {
	archive, manifests = o.Image, o.Manifests
	if archive == "" {
		archive = filepath.Join(filepath.Dir(o.MCO), "mco-image.tar")
	}
	if manifests == "" {
		variant := "default"
		if layout == LayoutKubeadm {
			variant = "kubeadm"
		}
		manifests = filepath.Join(filepath.Dir(o.MCO), "..", "config", variant)
	}
	if archive, err = filepath.Abs(archive); err != nil {
		return "", "", err
	}
	if manifests, err = filepath.Abs(manifests); err != nil {
		return "", "", err
	}
	if _, err := os.Stat(archive); err != nil {
		return "", "", fmt.Errorf("mco's container image: %w (run `make image`)", err)
	}
	if _, err := os.Stat(filepath.Join(manifests, "kustomization.yaml")); err != nil {
		return "", "", fmt.Errorf("the install manifests (config/default, or config/kubeadm): %w", err)
	}
	return archive, manifests, nil
}

// Join provisions one more machine for pool in a running dev cluster.
func Join(ctx context.Context, dir, pool, toolsDir, mco string) (string, error) {
	names, err := JoinMany(ctx, dir, pool, toolsDir, mco, 1)
	if len(names) == 0 {
		return "", err
	}
	return names[0], err
}

// JoinMany boots n new machines into pool at once, as a scale-up does, and waits until each has
// registered its Node (and, in the kubeadm layout, finished its join). It returns the names of
// the machines it made, also on failure.
func JoinMany(ctx context.Context, dir, pool, toolsDir, mco string, n int) ([]string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := LoadState(dir)
	if err != nil {
		return nil, err
	}
	c, _, err := scheme.NewClient(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	// The host may have rebooted since `mco dev up` raised its limits.
	if _, err := raiseHostLimits("/proc/sys"); err != nil {
		return nil, err
	}
	var names []string
	for range n {
		name := freeName(dir, pool)
		if err := st.addNode(ctx, c, dir, toolsDir, mco, name, pool); err != nil {
			return names, err
		}
		names = append(names, name)
	}
	// Only the new machines: the others may be in the middle of something of their own (a
	// rollout, a failure the admin is looking at), which is not the join's business.
	if err := st.waitNodes(ctx, c, dir, names, 3*time.Minute); err != nil {
		return names, err
	}
	if st.ClusterLayout() == LayoutKubeadm {
		return names, finishKubeadmJoins(ctx, dir, names)
	}
	return names, nil
}

// Down stops every process the dev cluster in dir started: machines first (each powered off
// while the API server can still hear its Node go NotReady), then the bootstrap controller and
// server if they still run, the API server, etcd last.
func Down(dir string) error {
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, name := range st.Machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := machine.Stop(MachineDir(dir, name), machine.PoweroffGrace+10*time.Second); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("machine %s: %w", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Machine supervisors are in the list too: one that never wrote its status (stopped while
	// making its disk) is not known to machine.Stop; the others are gone already.
	order := []string{}
	for name := range st.Processes {
		order = append(order, name)
	}
	rank := map[string]int{BootstrapControllerProcess: 1, BootstrapServerProcess: 1, ControllerManagerProcess: 2, SchedulerProcess: 2, APIServerProcess: 3, EtcdProcess: 4}
	slices.SortFunc(order, func(a, b string) int { return rank[a] - rank[b] })
	for _, name := range order {
		if err := stop(st.Processes[name], 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := devnet.Teardown(st.Network()); err != nil {
		errs = append(errs, fmt.Errorf("dev network: %w", err))
	}
	return errors.Join(errs...)
}

// checkTraversable fails, naming the directory to fix, when some ancestor of dir is closed to
// other users: the provisioning of a node would fail later, deep inside Ignition.
func checkTraversable(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s is mode %#o: node roots under %s must be reachable by their core user, whom Ignition becomes to write SSH keys; `chmod o+x %s` or choose another --dir", p, info.Mode().Perm(), dir, p)
		}
		if p == "/" {
			return nil
		}
	}
}

func (s *State) anyAlive() bool {
	for _, p := range s.Processes {
		if Alive(p.PID) {
			return true
		}
	}
	return false
}

// waitNodes waits until the machines' kubelets have registered their Nodes (which it gives
// their roles' labels), Ready and, where mco provisioned them (OpenShift layout), Done on their
// desired config, failing early when a machine or process stopped. A kubeadm layout's node is
// up once Ready: its agent adopts it only once mco is installed.
func (st *State) waitNodes(ctx context.Context, c client.Client, dir string, machines []string, timeout time.Duration) error {
	up := func(n *corev1.Node) bool { return rollout.Done(n) && rollout.Ready(n) }
	what := "Ready and Done"
	if st.ClusterLayout() == LayoutKubeadm {
		up, what = rollout.Ready, "Ready"
	}
	deadline := time.Now().Add(timeout)
	for {
		var nodes corev1.NodeList
		// Every Node of a dev cluster is one of its machines' (a kubeadm layout's carry no
		// label of mco dev's); only those waited for are looked at.
		if err := c.List(ctx, &nodes); err != nil {
			return err
		}
		if err := labelRoles(ctx, c, st.ClusterLayout(), nodes.Items, machines); err != nil {
			return err
		}
		pending := pendingNodes(nodes.Items, machines, up)
		if len(pending) == 0 {
			return nil
		}
		for name, p := range st.Processes {
			// Other machines may be off on purpose (stopped, lost); only the cluster's own
			// processes and the machines waited for must run.
			if m, ok := strings.CutPrefix(name, machineProcessPrefix); ok && !slices.Contains(machines, m) {
				continue
			}
			if !Alive(p.PID) {
				return fmt.Errorf("%s exited; see %s", name, p.Log)
			}
		}
		for _, name := range machines {
			if ms, err := machine.ReadStatus(MachineDir(dir, name)); err == nil && ms.State == machine.Off {
				return fmt.Errorf("machine %s is off (%s); see %s", name, ms.LastExit, filepath.Join(MachineDir(dir, name), machine.ConsoleFile))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nodes not %s after %s: %v (inside a machine: mco dev exec NAME -- journalctl -u mco-firstboot -u kubelet -u containerd; the agent: kubectl logs -n openshift-machine-config-operator daemonset/mco-daemon)", what, timeout, pending)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pendingNodes are the machines whose Node is missing or not up.
func pendingNodes(nodes []corev1.Node, machines []string, up func(*corev1.Node) bool) []string {
	done := map[string]bool{}
	for i := range nodes {
		done[nodes[i].Name] = up(&nodes[i])
	}
	var pending []string
	for _, name := range machines {
		if !done[name] {
			pending = append(pending, name)
		}
	}
	return pending
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "• "+format+"\n", args...)
	}
}
