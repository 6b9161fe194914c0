package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/protocol"
)

func requireSystemctl(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("systemctl"); err != nil {
		t.Fatal("systemctl not found: install the systemd package (apt-get install systemd)")
	}
}

// liveSystemd is the real systemctl for offline enablement; the live operations, which need a
// running systemd, are recorded instead.
type liveSystemd struct {
	*systemd.Systemctl
	mu  sync.Mutex
	ops []string
}

func (s *liveSystemd) record(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
	return nil
}
func (s *liveSystemd) Reload(_ context.Context, u string) error  { return s.record("reload " + u) }
func (s *liveSystemd) Restart(_ context.Context, u string) error { return s.record("restart " + u) }
func (s *liveSystemd) DaemonReload(context.Context) error        { return s.record("daemon-reload") }
func (s *liveSystemd) Ops() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ops...)
}

// agent is one simulated node: a Node object, a temp root and an agent that "reboots" by
// being stopped and started again on the same root.
type agent struct {
	name    string
	root    string
	sd      *liveSystemd
	reboots atomic.Int32
	stop    context.CancelFunc
	done    chan struct{}
}

func newRoot(t testing.TB) string {
	root := t.TempDir()
	for p, data := range map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000::/home/core:/bin/bash\n",
		"etc/group":  "root:x:0:\ncore:x:1000:\n",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755)
	os.MkdirAll(filepath.Join(root, "run"), 0o755)
	return root
}

// provision puts a root in config mc the way first boot would: files written, the record
// committed, and node-annotations.json for the agent to seed its Node with.
func provision(t testing.TB, root string, mc *mcfgv1.MachineConfig) {
	t.Helper()
	set := setOf(t, mc)
	r, err := noderoot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	record, _ := json.Marshal(mc)
	a := &apply.Applier{Root: r, Systemd: systemd.New(root)}
	txn, err := a.Begin(context.Background(), apply.Request{To: mc.Name, New: set, Record: record})
	if err == nil {
		err = txn.Apply(context.Background())
	}
	if err == nil {
		err = txn.Commit(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := json.Marshal(map[string]string{
		protocol.CurrentConfigAnnotation: mc.Name, protocol.DesiredConfigAnnotation: mc.Name, protocol.StateAnnotation: "Done",
	})
	if err := os.WriteFile(filepath.Join(root, daemon.NodeAnnotationsPath), seed, 0o644); err != nil {
		t.Fatal(err)
	}
}

func createNode(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	createReadyNode(t, ctx, name, map[string]string{protocol.WorkerRoleLabel: ""})
}

// createReadyNode registers a Ready Node, as a kubelet would, removed when the test ends.
func createReadyNode(t testing.TB, ctx context.Context, name string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The node controller may write the new Node (an adoption offer) before its status is set.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
		return env.Client.Status().Update(ctx, n)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
}

// startAgent runs the agent for node on root until the test ends, restarting it on reboots.
func startAgent(t *testing.T, name, root string) *agent {
	return startAgentWith(t, name, root, nil, nil)
}

// startAgentWith is startAgent with options adjusted by configure, and onReboot run at each
// reboot before the next agent starts (the boot loader's part), when they are set.
func startAgentWith(t *testing.T, name, root string, configure func(*daemon.Options), onReboot func()) *agent {
	ag := &agent{name: name, root: root, sd: &liveSystemd{Systemctl: systemd.New(root)}, done: make(chan struct{})}
	parent, cancel := context.WithCancel(context.Background())
	ag.stop = cancel
	go func() {
		defer close(ag.done)
		for parent.Err() == nil {
			ctx, stop := context.WithCancel(parent)
			opts := daemon.Options{NodeName: name, Root: root, DriftInterval: time.Second, Systemd: ag.sd, GuardBinary: "/bin/true",
				Rebooter: reboot.Func(func(context.Context, string) error {
					// Every boot starts with an empty /run.
					_ = os.Remove(filepath.Join(root, daemon.RebootPendingPath))
					if onReboot != nil {
						onReboot()
					}
					ag.reboots.Add(1)
					stop() // the "reboot": this agent process ends, a new one starts below
					return nil
				})}
			if configure != nil {
				configure(&opts)
			}
			if err := daemon.Run(ctx, env.Config, opts); err != nil && parent.Err() == nil {
				t.Errorf("agent %s: %v", name, err)
				time.Sleep(time.Second)
			}
			stop()
		}
	}()
	t.Cleanup(func() { cancel(); <-ag.done })
	return ag
}

func machineConfig(name string, files map[string]string) *mcfgv1.MachineConfig {
	cfg := types.Config{Ignition: types.Ignition{Version: "3.5.0"}}
	for p, data := range files {
		cfg.Storage.Files = append(cfg.Storage.Files, types.File{Node: types.Node{Path: p},
			FileEmbedded1: types.FileEmbedded1{Mode: ptr.To(0o644), Contents: types.Resource{Source: ptr.To("data:," + dataurl.EscapeString(data))}}})
	}
	raw, _ := json.Marshal(cfg)
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: "worker"}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}

func node(t testing.TB, ctx context.Context, name string) *corev1.Node {
	n := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, last)
}

func nodeSummary(n *corev1.Node) string {
	a := n.Annotations
	return strings.Join([]string{n.Name, "current=" + a[protocol.CurrentConfigAnnotation], "desired=" + a[protocol.DesiredConfigAnnotation],
		"state=" + a[protocol.StateAnnotation], "drain=" + a[protocol.DesiredDrainAnnotation] + "/" + a[protocol.LastAppliedDrainAnnotation],
		"reason=" + a[protocol.ReasonAnnotation]}, " ")
}

func poolTarget(t testing.TB, ctx context.Context) string {
	p := &mcfgv1.MachineConfigPool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, p); err != nil {
		return ""
	}
	return p.Spec.Configuration.Name
}
