// Command firstdrain measures how soon a node starts its update after one `kubectl apply -f
// dir/` of several MachineConfigs: from the start of kubectl to the pool's new target, to the
// node's desiredConfig, and to the agent's first drain request (desiredDrain=drain-<rendered>),
// the moment the node's disruption begins. It also counts the targets each apply gave the pool
// (one is the goal: each target is a drain and a reboot).
//
//	make bench-first-drain        # 5 applies
//	go run ./bench/firstdrain -runs 10
//
// It starts a kube-apiserver and etcd (internal/testenv), runs bin/mco controller against them
// with its default flags (so the render settle window is the one clusters get), and runs the
// real node agent (internal/daemon) in this process for one Node, on a temporary root, where a
// reboot restarts the agent. Each apply is five MachineConfigs: three files no disruption policy
// covers (drain and reboot), a unit and an SSH key. Needs root and systemctl, like the agent's
// tests.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/bench/controllerproc"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

const nodeName = "bench-node"

func main() {
	ctrl.SetLogger(logr.Discard())
	runs := flag.Int("runs", 5, "how many applies to measure, one after the other")
	mco := flag.String("mco", filepath.Join(testenv.RepoRoot(), "bin", "mco"), "the mco binary whose controller to run")
	flag.Parse()
	if err := run(*runs, *mco); err != nil {
		fmt.Fprintln(os.Stderr, "bench-first-drain:", err)
		os.Exit(1)
	}
}

func run(runs int, mco string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kubectl, err := testenv.Tool("kubectl")
	if err != nil {
		return err
	}
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer env.Stop()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: protocol.WorkerPool},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}},
		},
	}
	base := fileConfig("00-worker-base", "/etc/bench-base.conf", "base")
	for _, obj := range []client.Object{pool, base} {
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	controller, _, err := controllerproc.Start(ctx, mco, env.KubeconfigPath, "bench-first-drain")
	if err != nil {
		return err
	}
	defer func() { _ = controller.Process.Kill(); _, _ = controller.Process.Wait() }()
	initial, err := waitFor(ctx, func() (string, bool) {
		p := &mcfgv1.MachineConfigPool{}
		err := c.Get(ctx, client.ObjectKeyFromObject(pool), p)
		return p.Spec.Configuration.Name, err == nil && p.Spec.Configuration.Name != ""
	})
	if err != nil {
		return fmt.Errorf("first render: %w", err)
	}
	root, err := provision(ctx, c, initial)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := createNode(ctx, c); err != nil {
		return err
	}
	stopAgent := startAgent(ctx, env, root)
	defer stopAgent()
	if err := waitDone(ctx, c, initial); err != nil {
		return fmt.Errorf("node Done in %s: %w", initial, err)
	}

	var toDrain []time.Duration
	fmt.Printf("kubectl apply of 5 MachineConfigs; times from kubectl's start\n")
	target := initial
	for i := range runs {
		r, err := measure(ctx, c, kubectl, env.KubeconfigPath, i, target)
		if err != nil {
			return fmt.Errorf("apply %d: %w", i+1, err)
		}
		fmt.Printf("  apply %d: kubectl done %v, pool target %v, node desiredConfig %v, first drain request %v; %d target(s)\n", i+1,
			r.applied.Round(time.Millisecond), r.target.Round(time.Millisecond), r.desired.Round(time.Millisecond), r.drain.Round(time.Millisecond), len(r.targets))
		toDrain = append(toDrain, r.drain)
		target = r.targets[len(r.targets)-1]
		if err := waitDone(ctx, c, target); err != nil {
			return fmt.Errorf("apply %d: node Done in %s: %w", i+1, target, err)
		}
	}
	slices.Sort(toDrain)
	fmt.Printf("kubectl apply -> first drain request: median %v, max %v (goal: under 3s)\n",
		toDrain[len(toDrain)/2].Round(time.Millisecond), toDrain[len(toDrain)-1].Round(time.Millisecond))
	return nil
}

// result is one apply: times from kubectl's start, and every target the pool got.
type result struct {
	applied, target, desired, drain time.Duration
	targets                         []string
}

// measure applies run's five MachineConfigs with kubectl and times the steps through watches
// of the pool and the Node started before kubectl, so no step is missed.
func measure(ctx context.Context, c client.WithWatch, kubectl, kubeconfig string, run int, previous string) (result, error) {
	dir, err := os.MkdirTemp("", "bench-first-drain-*")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	for i, mc := range applyConfigs(run) {
		data, err := json.Marshal(mc)
		if err != nil {
			return result{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", i)), data, 0o644); err != nil {
			return result{}, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pools, err := c.Watch(ctx, &mcfgv1.MachineConfigPoolList{}, client.MatchingFields{"metadata.name": protocol.WorkerPool})
	if err != nil {
		return result{}, err
	}
	defer pools.Stop()
	nodes, err := c.Watch(ctx, &corev1.NodeList{}, client.MatchingFields{"metadata.name": nodeName})
	if err != nil {
		return result{}, err
	}
	defer nodes.Stop()

	// kubectl runs beside the watches: each step is timed when it happens, also while kubectl
	// is still creating MachineConfigs.
	start := time.Now()
	applied := make(chan error, 1)
	go func() {
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "-f", dir).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("kubectl apply: %w: %s", err, out)
		}
		applied <- err
	}()
	var r result
	for r.drain == 0 || r.applied == 0 {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case err := <-applied:
			if err != nil {
				return r, err
			}
			r.applied = time.Since(start)
		case ev, ok := <-pools.ResultChan():
			if !ok {
				return r, fmt.Errorf("pool watch ended")
			}
			if p, isPool := ev.Object.(*mcfgv1.MachineConfigPool); isPool && ev.Type != watch.Deleted {
				if name := p.Spec.Configuration.Name; name != previous && !slices.Contains(r.targets, name) {
					r.targets = append(r.targets, name)
					if r.target == 0 {
						r.target = time.Since(start)
					}
				}
			}
		case ev, ok := <-nodes.ResultChan():
			if !ok {
				return r, fmt.Errorf("node watch ended")
			}
			n, isNode := ev.Object.(*corev1.Node)
			if !isNode {
				continue
			}
			want := n.Annotations[protocol.DesiredConfigAnnotation]
			if want == previous {
				continue
			}
			if r.desired == 0 {
				r.desired = time.Since(start)
			}
			if n.Annotations[protocol.DesiredDrainAnnotation] == protocol.DrainRequest(want) {
				r.drain = time.Since(start)
			}
		}
	}
	// Targets that come after the drain started are counted too: each is another update.
	settle := time.After(8 * time.Second)
	for {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-settle:
			return r, nil
		case ev := <-pools.ResultChan():
			if p, isPool := ev.Object.(*mcfgv1.MachineConfigPool); isPool {
				if name := p.Spec.Configuration.Name; name != previous && !slices.Contains(r.targets, name) {
					r.targets = append(r.targets, name)
				}
			}
		}
	}
}

// applyConfigs are run's five MachineConfigs: three files that need a drain and a reboot, a
// unit, an SSH key.
func applyConfigs(run int) []*mcfgv1.MachineConfig {
	var mcs []*mcfgv1.MachineConfig
	for _, f := range []string{"a", "b", "c"} {
		mcs = append(mcs, fileConfig("50-worker-bench-"+f, "/etc/bench-"+f+".conf", fmt.Sprintf("run%d", run)))
	}
	mcs = append(mcs, config("60-worker-bench-unit", fmt.Sprintf(
		`{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"bench.service","enabled":true,"contents":"[Unit]\nDescription=run %d\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]}}`, run)))
	mcs = append(mcs, config("70-worker-bench-ssh", fmt.Sprintf(
		`{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0eJ0Xcpa1Sx2pDGk2MlAqX9nVvN0YH8Zl3mC4Tz1w run%d@bench"]}]}}`, run)))
	return mcs
}

func fileConfig(name, path, content string) *mcfgv1.MachineConfig {
	return config(name, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"mode":420,"contents":{"source":"data:,%s"}}]}}`, path, content))
}

func config(name, ign string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}},
	}
}

// provision makes a temporary root in the rendered config name, as the first boot leaves a
// machine: its files written and committed, and the Node's first annotations for the agent.
func provision(ctx context.Context, c client.Client, name string) (string, error) {
	mc := &mcfgv1.MachineConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return "", err
	}
	root, err := os.MkdirTemp("", "bench-first-drain-root-*")
	if err != nil {
		return "", err
	}
	for p, data := range map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000::/home/core:/bin/bash\n",
		"etc/group":  "root:x:0:\ncore:x:1000:\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	for _, d := range []string{"etc/systemd/system", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	ign, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		return "", err
	}
	set, err := nodefiles.FromConfig(ign)
	if err != nil {
		return "", err
	}
	r, err := noderoot.Open(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	record, err := json.Marshal(mc)
	if err != nil {
		return "", err
	}
	txn, err := (&apply.Applier{Root: r, Systemd: systemd.New(root)}).Begin(ctx, apply.Request{To: name, New: set, Record: record})
	if err == nil {
		err = txn.Apply(ctx)
	}
	if err == nil {
		err = txn.Commit(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("provisioning %s: %w", name, err)
	}
	seed, err := json.Marshal(map[string]string{protocol.CurrentConfigAnnotation: name, protocol.DesiredConfigAnnotation: name})
	if err != nil {
		return "", err
	}
	return root, os.WriteFile(filepath.Join(root, daemon.NodeAnnotationsPath), seed, 0o644)
}

// createNode registers the Node Ready in the worker pool, as a kubelet would.
func createNode(ctx context.Context, c client.Client) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{protocol.WorkerRoleLabel: ""}}}
	if err := c.Create(ctx, n); err != nil {
		return err
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
	return c.Status().Update(ctx, n)
}

// hostSystemd enables units in the root offline; the running system's reloads and restarts
// succeed without doing anything (there is no running system on the temporary root).
type hostSystemd struct{ *systemd.Systemctl }

func (hostSystemd) Reload(context.Context, string) error  { return nil }
func (hostSystemd) Restart(context.Context, string) error { return nil }
func (hostSystemd) DaemonReload(context.Context) error    { return nil }

// startAgent runs the agent until stopped; a reboot ends the agent and starts a new one on the
// same root, as a node's boot would.
func startAgent(ctx context.Context, env *testenv.Env, root string) (stop func()) {
	parent, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for parent.Err() == nil {
			agentCtx, reboot := context.WithCancel(parent)
			opts := daemon.Options{NodeName: nodeName, Root: root, Systemd: hostSystemd{systemd.New(root)},
				Rebooter: rebootFunc(root, reboot), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if err := daemon.Run(agentCtx, env.Config, opts); err != nil && parent.Err() == nil {
				fmt.Fprintln(os.Stderr, "agent:", err)
				time.Sleep(time.Second)
			}
			reboot()
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func rebootFunc(root string, end context.CancelFunc) reboot.Rebooter {
	return reboot.Func(func(context.Context, string) error {
		_ = os.Remove(filepath.Join(root, daemon.RebootPendingPath)) // every boot empties /run
		end()
		return nil
	})
}

func waitDone(ctx context.Context, c client.Client, config string) error {
	_, err := waitFor(ctx, func() (string, bool) {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, n); err != nil {
			return "", false
		}
		a := n.Annotations
		return "", a[protocol.CurrentConfigAnnotation] == config && a[protocol.DesiredConfigAnnotation] == config &&
			a[protocol.StateAnnotation] == string(protocol.NodeDone)
	})
	return err
}

func waitFor(ctx context.Context, cond func() (string, bool)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if v, ok := cond(); ok {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
