// Package clustertest is what the whole-system tests (test/e2e, test/e2e/stranded, test/e2e/images, test/chaos)
// share: a dev cluster of real machines for one test, on the package's own network slot (so the
// suites run side by side), reads inside its machines, waits on its worker pool, and an
// independent watcher of how many nodes were unavailable at once.
package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// WorkerSelector selects the worker pool's Nodes; KubeadmWorkerSelector a kubeadm layout's
// workers, which carry no role label.
const (
	WorkerSelector        = protocol.WorkerRoleLabel
	KubeadmWorkerSelector = "!" + protocol.ControlPlaneRoleLabel
)

// Cluster is a running dev cluster for one test.
type Cluster struct {
	Dir string
	C   client.Client
	// Watcher watches the worker Nodes from the moment the cluster is up.
	Watcher *Watcher
}

// Options are what a test asks of its cluster besides its worker count.
type Options struct {
	// Nodes is how many worker machines boot besides the control-plane machine master-0.
	Nodes int
	// Layout is how machines are built ("": OpenShift's); NoInstall leaves a kubeadm layout's
	// cluster without mco, for the test to install it (devcluster.InstallMCO).
	Layout    devcluster.Layout
	NoInstall bool
}

// Start brings up a dev cluster of nodes worker machines in a temporary directory; it is torn
// down when the test ends, after dumping its logs and the machines' journals if the test failed.
func Start(t testing.TB, ctx context.Context, nodes int) *Cluster {
	t.Helper()
	return StartWith(t, ctx, Options{Nodes: nodes})
}

// StartWith is Start with the cluster's layout chosen.
func StartWith(t testing.TB, ctx context.Context, o Options) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("dev clusters boot real machines (namespaces, loop mounts): run the tests as root")
	}
	mco := testenv.RequireMCO(t)
	for _, tool := range []string{"etcd", "kube-apiserver", "kubectl", "kubelet", "ignition"} {
		testenv.RequireTool(t, tool)
	}
	lockCluster(t)
	dir := t.TempDir()
	// The path to a machine's root must be traversable by the core user, whom Ignition becomes
	// to write SSH keys; t.TempDir() makes 0700 directories.
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			DumpLogs(t, dir)
		}
		if err := devcluster.Down(dir); err != nil {
			t.Errorf("mco dev down: %v", err)
		}
	})
	variant := "default"
	if o.Layout == devcluster.LayoutKubeadm {
		variant = "kubeadm"
	}
	opts := devcluster.Options{Dir: dir, Nodes: o.Nodes, NodePools: []string{"worker"}, ToolsDir: testenv.ToolsDir(), MCO: mco,
		Image: filepath.Join(testenv.RepoRoot(), "bin", "mco-image.tar"), Manifests: filepath.Join(testenv.RepoRoot(), "config", variant),
		Layout: o.Layout, NoInstall: o.NoInstall, NetworkSlot: networkSlot}
	if err := devcluster.Up(ctx, opts); err != nil {
		t.Fatalf("mco dev up: %v", err)
	}
	c, cfg, err := scheme.NewClient(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	selector := WorkerSelector
	if o.Layout == devcluster.LayoutKubeadm {
		selector = KubeadmWorkerSelector
	}
	w, err := Watch(ctx, cfg, selector)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Dir: dir, C: c, Watcher: w}
}

// DumpLogs logs the tail of every process log, machine console and machine journal of the dev
// cluster in dir.
func DumpLogs(t testing.TB, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	consoles, _ := filepath.Glob(filepath.Join(dir, "machines", "*", machine.ConsoleFile))
	logs = append(logs, consoles...)
	for _, m := range consoles {
		name := filepath.Base(filepath.Dir(m))
		out, _ := machine.Output(context.Background(), filepath.Dir(m), "sh", "-c", "journalctl --no-pager -n 60 -u "+
			devcluster.FirstBootUnit+" -u "+devcluster.KubeletUnit+" -u containerd; echo '--- agent pod'; "+devcluster.AgentLogsScript(60))
		t.Logf("--- journal of %s (tail)\n%s", name, out)
	}
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		t.Logf("--- %s (tail)\n%s", filepath.Base(l), data)
	}
}

// MachineDir is the directory of the machine name.
func (cl *Cluster) MachineDir(name string) string { return devcluster.MachineDir(cl.Dir, name) }

// Apply creates the MachineConfigs of an examples/ file.
func (cl *Cluster) Apply(t testing.TB, ctx context.Context, example string) {
	t.Helper()
	set, err := manifest.Load(manifest.Options{}, filepath.Join(testenv.RepoRoot(), "examples", example))
	if err != nil {
		t.Fatal(err)
	}
	for _, mc := range set.MachineConfigs {
		if err := cl.C.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
}

// Pool is the worker pool.
func (cl *Cluster) Pool(t testing.TB, ctx context.Context) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	if err := cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// WaitUpdated waits for the worker pool to target a config other than previous and report every
// machine Updated on it; it returns the new target.
func (cl *Cluster) WaitUpdated(t testing.TB, ctx context.Context, previous string, machines int32) string {
	t.Helper()
	var p *mcfgv1.MachineConfigPool
	Eventually(t, rolloutBound(machines), "worker pool Updated on a new config", func() bool {
		p = cl.Pool(t, ctx)
		target := p.Spec.Configuration.Name
		return target != previous && p.Status.Configuration.Name == target &&
			p.Status.UpdatedMachineCount == machines && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	return p.Spec.Configuration.Name
}

// WaitUpdatedWith is WaitUpdated for a target rendered from a named MachineConfig (several
// applied at once may render more than once).
func (cl *Cluster) WaitUpdatedWith(t testing.TB, ctx context.Context, previous string, machines int32, source string) string {
	t.Helper()
	var target string
	Eventually(t, rolloutBound(machines), "worker pool Updated on a config including "+source, func() bool {
		p := cl.Pool(t, ctx)
		target = p.Spec.Configuration.Name
		return HasSource(p, source) && target != previous && p.Status.Configuration.Name == target &&
			p.Status.UpdatedMachineCount == machines && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	return target
}

// rolloutBound bounds a rollout over machines: each may drain and reboot in turn, and a minute
// and a half each is generous on a loaded 2-core host, where a cycle takes 15 to 40 s.
func rolloutBound(machines int32) time.Duration {
	return 90 * time.Second * time.Duration(max(machines, 2))
}

// HasSource reports whether the pool's target is rendered from the MachineConfig named source.
func HasSource(p *mcfgv1.MachineConfigPool, source string) bool {
	for _, s := range p.Spec.Configuration.Source {
		if s.Name == source {
			return true
		}
	}
	return false
}

// Output runs a command inside the machine name and returns its standard output; the error
// carries standard error.
func (cl *Cluster) Output(ctx context.Context, name string, args ...string) (string, error) {
	return machine.Output(ctx, cl.MachineDir(name), args...)
}

// NodeFile reads a file inside a running machine ("" when it cannot be read).
func (cl *Cluster) NodeFile(ctx context.Context, name, path string) string {
	out, _ := cl.Output(ctx, name, "cat", path)
	return out
}

// InMachine runs a command inside a machine and returns its trimmed output.
func (cl *Cluster) InMachine(t testing.TB, ctx context.Context, name string, args ...string) string {
	t.Helper()
	out, err := cl.Output(ctx, name, args...)
	if err != nil {
		t.Fatalf("in %s: %v", name, err)
	}
	return strings.TrimSpace(out)
}

// Boots is how many times a machine has booted.
func (cl *Cluster) Boots(t testing.TB, name string) int {
	t.Helper()
	st, err := machine.ReadStatus(cl.MachineDir(name))
	if err != nil {
		t.Fatal(err)
	}
	return st.Boots
}

// Node is the Node name.
func (cl *Cluster) Node(t testing.TB, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := cl.C.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// NodeIP is the node's InternalIP.
func (cl *Cluster) NodeIP(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	for _, a := range cl.Node(t, ctx, name).Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	t.Fatalf("node %s has no InternalIP", name)
	return ""
}

// Eventually polls cond every 100 ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := WaitFor(context.Background(), timeout, cond); err != nil {
		t.Fatalf("%v waiting for %s", err, what)
	}
}

// WaitFor polls cond every 100 ms until it holds, timeout passes or ctx ends; for waits that
// must not end the test (fault injectors, diagnoses).
func WaitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		if !Sleep(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// Sleep waits d; false if ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// FileConfig is a worker MachineConfig writing one file (mode 0644), its content in a data URL
// escaped as RFC 2397 requires ('#', '%' and the like included).
func FileConfig(name, path, content string) *mcfgv1.MachineConfig {
	raw, err := json.Marshal(map[string]any{
		"ignition": map[string]string{"version": "3.4.0"},
		"storage": map[string]any{"files": []any{map[string]any{
			"path": path, "mode": 0o644, "contents": map[string]string{"source": "data:," + dataurl.EscapeString(content)}}}},
	})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}

// WorkerBoots are the worker Nodes by name, each with how often its machine has booted so far.
func (cl *Cluster) WorkerBoots(t testing.TB, ctx context.Context) map[string]int {
	t.Helper()
	var nodes corev1.NodeList
	if err := cl.C.List(ctx, &nodes, client.HasLabels{WorkerSelector}); err != nil {
		t.Fatal(err)
	}
	boots := map[string]int{}
	for _, n := range nodes.Items {
		boots[n.Name] = cl.Boots(t, n.Name)
	}
	return boots
}
