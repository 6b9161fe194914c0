package diagnose

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

const tokenValue = "s3cr3t-bearer-token"

// seed creates, once, a worker pool, its Node, a MachineConfig with a file at a secret path,
// and two events: one about the Node, one about an application's pod.
func seed(t *testing.T, ctx context.Context) {
	t.Helper()
	c := env.Client
	objs := []client.Object{
		&mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: "worker"}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}},
		}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Labels: map[string]string{protocol.WorkerRoleLabel: ""},
			Annotations: map[string]string{protocol.StateAnnotation: string(protocol.NodeDegraded), protocol.ReasonAnnotation: "drift: /etc/chrony.conf"}}},
		machineConfig("50-worker-token", `{"ignition":{"version":"3.4.0"},"storage":{"files":[`+
			`{"path":"/etc/mco/api-token","contents":{"source":"data:,`+tokenValue+`"}},`+
			`{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
	}
	objs[2].SetLabels(map[string]string{protocol.RoleLabel: "worker"})
	now := metav1.Now()
	events := []client.Object{
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "worker-0.drain"}, Reason: "Drain", Message: "draining worker-0",
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "worker-0"}, LastTimestamp: now, FirstTimestamp: now, Type: "Normal"},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart.pulled"}, Reason: "Pulled", Message: "image pulled",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "cart"}, LastTimestamp: now, FirstTimestamp: now, Type: "Normal"},
	}
	for _, o := range append(objs, events...) {
		if err := c.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

// devDir is a dev cluster's directory with its log files, one machine that is off (power
// lost, not booted again) and one in state.json whose directory is gone.
func devDir(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"logs/controller.log": "controller started\n", "logs/server.log": "serving\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	state, _ := json.Marshal(devcluster.State{Machines: []string{"worker-0", "worker-9"}})
	status, _ := json.Marshal(machine.Status{State: machine.Off, Boots: 2, LastExit: "power loss"})
	m := devcluster.MachineDir(dir, "worker-0")
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{filepath.Join(dir, "state.json"): state, filepath.Join(m, "status.json"): status} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hasFailure(b *Bundle, parts ...string) bool {
	for _, f := range b.Failures() {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(f, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestCollectFromTheAPIServer(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	seed(t, ctx)
	dir := devDir(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	b := Collect(ctx, Options{Client: env.Client, Discovery: cs.Discovery(), Logs: DevCluster{Dir: dir}, Since: time.Hour, Now: time.Now(), CLIVersion: "mco test"})

	for _, name := range []string{
		"cluster/machineconfigpools/worker.yaml", "cluster/nodes/worker-0.yaml", "cluster/machineconfigs/50-worker-token.yaml",
		"logs/controller.log", "logs/server.log", "nodes/worker-0/machine.yaml", SummaryFile, RedactionsFile, EventsFile, EventsTableFile,
		"explain/mcp-worker.txt", "explain/node-worker-0.txt",
	} {
		if _, ok := b.File(name); !ok {
			t.Errorf("bundle lacks %s; it has %v", name, b.Names())
		}
	}
	mc, _ := b.File("cluster/machineconfigs/50-worker-token.yaml")
	if strings.Contains(string(mc), tokenValue) || !strings.Contains(string(mc), sha(tokenValue)) || !strings.Contains(string(mc), "data:,hello") {
		t.Errorf("machineconfig: want the token file hashed (%s), /etc/motd kept:\n%s", sha(tokenValue), mc)
	}
	if !strings.Contains(string(mc), "kind: MachineConfig") {
		t.Errorf("machineconfig file lacks its kind:\n%s", mc)
	}
	for _, name := range b.Names() {
		if data, _ := b.File(name); strings.Contains(string(data), tokenValue) {
			t.Errorf("%s holds the secret", name)
		}
	}
	if r, _ := b.File(RedactionsFile); !strings.Contains(string(r), "machineconfig 50-worker-token: file /etc/mco/api-token: sha256 "+sha(tokenValue)) {
		t.Errorf("redactions.txt:\n%s", r)
	}
	events, _ := b.File(EventsTableFile)
	if !strings.Contains(string(events), "draining worker-0") || strings.Contains(string(events), "image pulled") {
		t.Errorf("events: want the Node's, not the shop's pod's:\n%s", events)
	}
	// A machine that is off and one that is gone are recorded, not fatal.
	if !hasFailure(b, "nodes/worker-0/agent.log", "not running") || !hasFailure(b, "nodes/worker-9", "no dev machine") {
		t.Errorf("failures %q: want worker-0's journal (machine off) and worker-9 (no machine)", b.Failures())
	}
	summary, _ := b.File(SummaryFile)
	for _, want := range []string{"dev cluster in " + dir, "Kubernetes: v", "node worker-0: Degraded: drift: /etc/chrony.conf", "parts could not be collected", "  node/worker-0: "} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

// TestCollectWithoutPermissions collects as a user who may only list pools and nodes: every
// other part fails with the API server's own Forbidden, and the bundle still has what was
// allowed and a summary.
func TestCollectWithoutPermissions(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	seed(t, ctx)
	const user = "diagnose-readonly"
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
			{APIGroups: []string{mcfgv1.GroupName}, Resources: []string{"machineconfigpools"}, Verbs: []string{"list"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	var b *Bundle
	// RBAC takes a moment to see a new binding.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b = Collect(ctx, Options{Client: c, Logs: Pods{Client: cs, Namespace: Namespace}, Since: time.Hour, Now: time.Now()})
		if _, ok := b.File("cluster/nodes/worker-0.yaml"); ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, name := range []string{"cluster/machineconfigpools/worker.yaml", "cluster/nodes/worker-0.yaml", SummaryFile} {
		if _, ok := b.File(name); !ok {
			t.Errorf("bundle lacks %s; it has %v (failures %q)", name, b.Names(), b.Failures())
		}
	}
	for _, part := range []string{MachineConfigsDir, "events", "cluster/machineconfignodes", "cluster/kubeletconfigs", "logs of controller", "logs of server", "agent logs"} {
		if !hasFailure(b, part, "forbidden") {
			t.Errorf("no Forbidden failure for %s in %q", part, b.Failures())
		}
	}
	if _, ok := b.File("cluster/machineconfigs/50-worker-token.yaml"); ok {
		t.Error("a MachineConfig was collected without permission to list them")
	}
}

// TestPodsWithoutPods: on a cluster without mco's pods, each missing log is named.
func TestPodsWithoutPods(t *testing.T) {
	testenv.Integration(t)
	var b Bundle
	p := Pods{Client: kubernetes.NewForConfigOrDie(env.Config), Namespace: Namespace}
	p.ComponentLogs(context.Background(), &b, time.Hour)
	p.AgentLogs(context.Background(), &b, []string{"worker-0"}, time.Hour)
	for _, c := range []string{"controller", "server"} {
		if !hasFailure(&b, "logs of "+c, "no pod labelled app.kubernetes.io/name=mco,app.kubernetes.io/component="+c) {
			t.Errorf("failures %q: want one for the %s's logs", b.Failures(), c)
		}
	}
	if !hasFailure(&b, "agent logs", "component=daemon") {
		t.Errorf("failures %q: want one for the agents' logs", b.Failures())
	}
}

func TestDevDirFor(t *testing.T) {
	dir := devDir(t)
	if got := DevDirFor(filepath.Join(dir, "kubeconfig")); got != dir {
		t.Errorf("DevDirFor(dev kubeconfig) = %q, want %q", got, dir)
	}
	for _, k := range []string{"", filepath.Join(t.TempDir(), "kubeconfig"), filepath.Join(dir, "kubeconfig") + ":/other"} {
		if got := DevDirFor(k); got != "" {
			t.Errorf("DevDirFor(%q) = %q, want none", k, got)
		}
	}
}
