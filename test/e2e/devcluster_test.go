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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/devcluster"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
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
	// Like a real disk, the path to a node root must be traversable by the core user, whom
	// Ignition becomes to write SSH keys; t.TempDir() makes 0700 directories.
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
	c, cfg, err := clientconfig.NewClient(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{dir: dir, c: c}, watchUnavailable(t, ctx, cfg, "node-role.kubernetes.io/worker")
}

func dumpLogs(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
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

func (cl *cluster) nodeFile(name, path string) string {
	data, _ := os.ReadFile(filepath.Join(cl.dir, "nodes", name, "root", path))
	return string(data)
}

func (cl *cluster) node(t *testing.T, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := cl.c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestDevClusterRollouts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cl, watcher := startCluster(t, ctx, 3)
	workers := []string{"worker-0", "worker-1", "worker-2"}
	target := cl.pool(t, ctx).Spec.Configuration.Name

	t.Run("file change rolls one node at a time", func(t *testing.T) {
		watcher.reset()
		cl.apply(t, ctx, "50-worker-chrony.yaml")
		target = cl.waitUpdated(t, ctx, target, 3)
		if most, who := watcher.maxUnavailable(); most != 1 {
			t.Fatalf("%d nodes were unavailable at once (%v); maxUnavailable is 1", most, who)
		}
		for _, n := range workers {
			if !strings.Contains(cl.nodeFile(n, "etc/chrony.conf"), "pool 0.pool.ntp.org iburst") {
				t.Errorf("%s: /etc/chrony.conf = %q", n, cl.nodeFile(n, "etc/chrony.conf"))
			}
		}
	})

	t.Run("a kernel argument change reboots each node", func(t *testing.T) {
		watcher.reset()
		cl.apply(t, ctx, "80-worker-kargs.yaml")
		target = cl.waitUpdated(t, ctx, target, 3)
		var events corev1.EventList
		if err := cl.c.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		rebooted := map[string]bool{}
		for _, e := range events.Items {
			if e.Reason == "Reboot" && strings.Contains(e.Message, target) {
				rebooted[e.InvolvedObject.Name] = true
			}
		}
		for _, n := range workers {
			if !rebooted[n] {
				t.Errorf("%s did not reboot into %s (events: %v)", n, target, rebooted)
			}
			if !watcher.notReadySeen(n) {
				t.Errorf("%s never went NotReady while rebooting", n)
			}
			if !strings.Contains(cl.nodeFile(n, "var/lib/mco-dev/staged-os.json"), "audit=1") {
				t.Errorf("%s: the kernel argument was not staged for the next boot", n)
			}
		}
		if most, who := watcher.maxUnavailable(); most > 1 {
			t.Fatalf("%d nodes were unavailable at once (%v)", most, who)
		}
	})

	t.Run("a bad MachineConfig degrades the pool and leaves nodes alone", func(t *testing.T) {
		bad := &mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "90-worker-bad", Labels: map[string]string{protocol.RoleLabel: "worker"}},
			Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
				`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/usr/local/bin/suid","mode":2541,"contents":{"source":"data:,x"}}]}}`)}},
		}
		if err := cl.c.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "RenderDegraded naming 90-worker-bad", func() bool {
			c := poolcondition.Get(&cl.pool(t, ctx).Status, mcfgv1.MachineConfigPoolRenderDegraded)
			return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "90-worker-bad")
		})
		time.Sleep(2 * time.Second)
		for _, n := range workers {
			if got := cl.node(t, ctx, n).Annotations[protocol.DesiredConfigAnnotation]; got != target {
				t.Errorf("%s was moved to %s by a config that failed to render", n, got)
			}
		}
		if err := cl.c.Delete(ctx, bad); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "RenderDegraded cleared", func() bool {
			return !poolcondition.IsTrue(&cl.pool(t, ctx).Status, mcfgv1.MachineConfigPoolRenderDegraded)
		})
	})

	t.Run("drift stops the rollout until the file is restored", func(t *testing.T) {
		drifted := filepath.Join(cl.dir, "nodes", "worker-0", "root", "etc", "chrony.conf")
		original, err := os.ReadFile(drifted)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(drifted, []byte("server evil.example.com\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "worker-0 Degraded naming the drifted file", func() bool {
			a := cl.node(t, ctx, "worker-0").Annotations
			return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "/etc/chrony.conf")
		})
		cl.apply(t, ctx, "60-worker-hello-unit.yaml")
		eventually(t, time.Minute, "a new target", func() bool { return cl.pool(t, ctx).Spec.Configuration.Name != target })
		time.Sleep(5 * time.Second)
		moved := 0
		for _, n := range workers {
			if cl.node(t, ctx, n).Annotations[protocol.CurrentConfigAnnotation] != target {
				moved++
			}
		}
		if moved > 0 {
			t.Fatalf("%d nodes moved on while worker-0 was degraded with maxUnavailable 1", moved)
		}
		if err := os.WriteFile(drifted, original, 0o644); err != nil {
			t.Fatal(err)
		}
		target = cl.waitUpdated(t, ctx, target, 3)
		if !strings.Contains(cl.nodeFile("worker-1", "etc/systemd/system/hello-mco.service"), "hello from mco") {
			t.Error("the unit did not arrive after recovery")
		}
	})

	t.Run("a new machine joins through the real Ignition client", func(t *testing.T) {
		cl.apply(t, ctx, "70-worker-ssh.yaml")
		target = cl.waitUpdated(t, ctx, target, 3)
		name, err := devcluster.Join(ctx, cl.dir, "worker", testenv.ToolsDir(), testenv.RequireMCO(t))
		if err != nil {
			t.Fatal(err)
		}
		n := cl.node(t, ctx, name)
		if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != target {
			t.Fatalf("%s booted into %q, want the pool's %s", name, got, target)
		}
		if !strings.Contains(cl.nodeFile(name, "etc/systemd/system/hello-mco.service"), "hello from mco") {
			t.Fatal("the joined machine lacks the pool's files")
		}
		if !strings.Contains(cl.nodeFile(name, "home/core/.ssh/authorized_keys.d/ignition"), "admin@example.com") {
			t.Fatal("the joined machine lacks core's SSH key")
		}
		var events corev1.EventList
		if err := cl.c.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == "Reboot" {
				t.Fatalf("the joined machine needed another update: %s", e.Message)
			}
		}
		time.Sleep(3 * time.Second) // long enough for the agent's first validation and drift check
		if a := cl.node(t, ctx, name).Annotations; a[protocol.StateAnnotation] != string(protocol.NodeDone) {
			t.Fatalf("%s is %s after joining: %s", name, a[protocol.StateAnnotation], a[protocol.ReasonAnnotation])
		}
		eventually(t, time.Minute, "4 machines updated", func() bool {
			p := cl.pool(t, ctx)
			return p.Status.MachineCount == 4 && p.Status.UpdatedMachineCount == 4
		})
	})
}
