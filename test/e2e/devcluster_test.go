package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/devcluster"
	"github.com/mco-dev/mco/internal/machine"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// cluster is a running dev cluster for one test.
type cluster struct {
	dir string
	c   client.Client
}

func startCluster(t *testing.T, ctx context.Context, nodes int) (*cluster, *unavailabilityWatcher) {
	t.Helper()
	mco := testenv.RequireMCO(t)
	for _, tool := range []string{"etcd", "kube-apiserver", "ignition"} {
		testenv.RequireTool(t, tool)
	}
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
			dumpLogs(t, dir)
		}
		if err := devcluster.Down(dir); err != nil {
			t.Errorf("mco dev down: %v", err)
		}
	})
	if err := devcluster.Up(ctx, devcluster.Options{Dir: dir, Nodes: nodes, NodePools: []string{"worker"}, ToolsDir: testenv.ToolsDir(), MCO: mco}); err != nil {
		t.Fatalf("mco dev up: %v", err)
	}
	c, cfg, err := scheme.NewClient(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{dir: dir, c: c}, watchUnavailable(t, ctx, cfg, "node-role.kubernetes.io/worker")
}

func dumpLogs(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	consoles, _ := filepath.Glob(filepath.Join(dir, "machines", "*", machine.ConsoleFile))
	logs = append(logs, consoles...)
	for _, m := range consoles {
		name := filepath.Base(filepath.Dir(m))
		out, _ := machine.Output(context.Background(), filepath.Dir(m), "journalctl", "--no-pager", "-n", "60",
			"-u", devcluster.AgentUnit, "-u", devcluster.FirstBootUnit, "-u", devcluster.KubeletUnit)
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

// apply creates the MachineConfigs of an examples/ file.
func (cl *cluster) apply(t *testing.T, ctx context.Context, example string) {
	t.Helper()
	set, err := manifest.Load(manifest.Options{}, filepath.Join(testenv.RepoRoot(), "examples", example))
	if err != nil {
		t.Fatal(err)
	}
	for _, mc := range set.MachineConfigs {
		if err := cl.c.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
}

func (cl *cluster) pool(t *testing.T, ctx context.Context) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	if err := cl.c.Get(ctx, client.ObjectKey{Name: "worker"}, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// waitUpdated waits for the worker pool to target a config other than previous and report every
// machine Updated on it; it returns the new target.
func (cl *cluster) waitUpdated(t *testing.T, ctx context.Context, previous string, machines int32) string {
	t.Helper()
	var p *mcfgv1.MachineConfigPool
	eventually(t, 2*time.Minute, "worker pool Updated on a new config", func() bool {
		p = cl.pool(t, ctx)
		target := p.Spec.Configuration.Name
		return target != previous && p.Status.Configuration.Name == target &&
			p.Status.UpdatedMachineCount == machines && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	return p.Spec.Configuration.Name
}

// nodeFile reads a file inside a running machine ("" when it cannot be read).
func (cl *cluster) nodeFile(ctx context.Context, name, path string) string {
	out, _ := machine.Output(ctx, devcluster.MachineDir(cl.dir, name), "cat", path)
	return out
}

// inMachine runs a command inside a machine and returns its trimmed output.
func (cl *cluster) inMachine(t *testing.T, ctx context.Context, name string, args ...string) string {
	t.Helper()
	out, err := machine.Output(ctx, devcluster.MachineDir(cl.dir, name), args...)
	if err != nil {
		t.Fatalf("in %s: %v", name, err)
	}
	return strings.TrimSpace(out)
}

// boots is how many times a machine has booted.
func (cl *cluster) boots(t *testing.T, name string) int {
	t.Helper()
	st, err := machine.ReadStatus(devcluster.MachineDir(cl.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return st.Boots
}

func (cl *cluster) node(t *testing.T, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := cl.c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}
