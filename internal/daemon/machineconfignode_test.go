package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// mcnWrites sees every request the package's agents and controllers send (TestMain wraps
// env.Config with it): it counts the writes of MachineConfigNodes per object, the status
// subresource (the agent's) apart from the rest (the controller's), and can fail the agent's
// reads and writes of one object.
var mcnWrites = &mcnTraffic{status: map[string]int{}, spec: map[string]int{}, failing: map[string]bool{}}

type mcnTraffic struct {
	mu      sync.Mutex
	status  map[string]int // PATCH/PUT .../machineconfignodes/<name>/status
	spec    map[string]int // POST, PATCH, PUT, DELETE of the object itself
	failing map[string]bool
}

func (m *mcnTraffic) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		name, sub, ok := mcnRequest(req)
		if !ok {
			return next.RoundTrip(req)
		}
		m.mu.Lock()
		fail := m.failing[name] && (sub == "status" || req.Method == http.MethodGet)
		m.mu.Unlock()
		if fail {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Request: req,
				Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("injected by the test"))}, nil
		}
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 && req.Method != http.MethodGet {
			m.mu.Lock()
			if sub == "status" {
				m.status[name]++
			} else {
				m.spec[name]++
			}
			m.mu.Unlock()
		}
		return resp, err
	})
}

// mcnRequest names the MachineConfigNode a request is about (a create names it in its body)
// and its subresource; ok is false for other requests and for lists and watches.
func mcnRequest(req *http.Request) (name, sub string, ok bool) {
	const prefix = "/apis/machineconfiguration.openshift.io/v1/machineconfignodes"
	rest, found := strings.CutPrefix(req.URL.Path, prefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if parts[0] != "" {
		name = parts[0]
		if len(parts) > 1 {
			sub = parts[1]
		}
		return name, sub, true
	}
	if req.Method != http.MethodPost || req.GetBody == nil {
		return "", "", false
	}
	body, err := req.GetBody()
	if err != nil {
		return "", "", false
	}
	var obj metav1.PartialObjectMetadata
	data, _ := io.ReadAll(body)
	if json.NewDecoder(bytes.NewReader(data)).Decode(&obj) != nil {
		return "", "", false
	}
	return obj.Name, "", true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (m *mcnTraffic) counts(name string) (status, spec int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status[name], m.spec[name]
}

func (m *mcnTraffic) fail(name string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failing[name] = on
}

// The writes one update may cost a node's MachineConfigNode: the agent's status writes (update
// prepared and drained, before the reboot, Done; without a drain only Done, carrying every
// step) and the controller's one spec write (the new desired).
const (
	maxStatusWritesRebootless = 1
	maxStatusWritesRebooting  = 3
	maxSpecWritesPerUpdate    = 1
)

// TestMachineConfigNodeReport rolls a rebootless and a rebooting update through a pool of one
// node with the real controllers and agent, drifts and repairs the node, and checks what
// `kubectl get mcn` shows and how many writes each step cost.
func TestMachineConfigNodeReport(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "mcn-report", "mcn-report-0"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))
	m := awaitMCN(t, ctx, name, "Updated in "+r0, updatedIn(r0))
	wantConditions(t, m, map[mcfgv1.StateProgress]metav1.ConditionStatus{
		mcfgv1.MachineConfigNodeUpdated: metav1.ConditionTrue, mcfgv1.MachineConfigNodeResumed: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeNodeDegraded: metav1.ConditionFalse, mcfgv1.MachineConfigNodeUpdatePrepared: metav1.ConditionFalse,
	})
	if m.Spec.Pool.Name != pool {
		t.Errorf("spec.pool.name = %q, want %q", m.Spec.Pool.Name, pool)
	}

	// 1. Rebootless: a file whose default policy reloads crio (no drain).
	status0, spec0 := settledCounts(t, name)
	createPoolConfig(t, ctx, pool, "50-"+pool+"-policy", map[string]string{"/etc/containers/policy.json": "{}"})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
	m = awaitMCN(t, ctx, name, "Updated in "+r1, updatedIn(r1))
	status1, spec1 := settledCounts(t, name)
	t.Logf("rebootless update: %d status writes (agent), %d spec writes (controller)", status1-status0, spec1-spec0)
	checkWrites(t, "rebootless", status1-status0, spec1-spec0, maxStatusWritesRebootless)
	wantConditions(t, m, map[mcfgv1.StateProgress]metav1.ConditionStatus{
		mcfgv1.MachineConfigNodeUpdatePrepared: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdateExecuted: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateFilesAndOS: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdatePostActionComplete: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateComplete: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdated: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateDrained: metav1.ConditionFalse, mcfgv1.MachineConfigNodeUpdateRebooted: metav1.ConditionFalse,
	})
	if c := meta.FindStatusCondition(m.Status.Conditions, string(mcfgv1.MachineConfigNodeUpdatePostActionComplete)); !strings.Contains(c.Message, "Reload crio.service") {
		t.Errorf("UpdatePostActionComplete %q does not name the reload", c.Message)
	}

	// 2. A file no policy covers: drain, reboot, uncordon.
	createPoolConfig(t, ctx, pool, "60-"+pool+"-reboot", map[string]string{"/etc/needs-reboot.conf": "x"})
	r2 := awaitPoolTarget(t, ctx, pool, r1)
	awaitNode(t, ctx, name, "Done in "+r2, doneIn(r2))
	m = awaitMCN(t, ctx, name, "Updated in "+r2, updatedIn(r2))
	status2, spec2 := settledCounts(t, name)
	t.Logf("rebooting update: %d status writes (agent), %d spec writes (controller)", status2-status1, spec2-spec1)
	checkWrites(t, "rebooting", status2-status1, spec2-spec1, maxStatusWritesRebooting)
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("%d reboots, want 1", got)
	}
	wantConditions(t, m, map[mcfgv1.StateProgress]metav1.ConditionStatus{
		mcfgv1.MachineConfigNodeUpdateCordoned: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdateDrained: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateRebooted: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdateUncordoned: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateComplete: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdatePostActionComplete: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeResumed: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdated: metav1.ConditionTrue,
	})

	// 3. Drift: NodeDegraded with the agent's reason, one write; repaired, one more.
	drifted := filepath.Join(root, "etc/base.conf")
	if err := os.WriteFile(drifted, []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = awaitMCN(t, ctx, name, "NodeDegraded by drift", func(m *mcfgv1.MachineConfigNode) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, string(mcfgv1.MachineConfigNodeNodeDegraded))
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "/etc/base.conf")
	})
	wantConditions(t, m, map[mcfgv1.StateProgress]metav1.ConditionStatus{
		mcfgv1.MachineConfigNodeUpdated: metav1.ConditionFalse, mcfgv1.MachineConfigNodeUpdateComplete: metav1.ConditionTrue,
	})
	if err := os.WriteFile(drifted, []byte("base"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = awaitMCN(t, ctx, name, "no longer degraded", func(m *mcfgv1.MachineConfigNode) bool {
		return meta.IsStatusConditionFalse(m.Status.Conditions, string(mcfgv1.MachineConfigNodeNodeDegraded)) && updatedIn(r2)(m)
	})
	status3, spec3 := settledCounts(t, name)
	t.Logf("drift and its repair: %d status writes, %d spec writes", status3-status2, spec3-spec2)
	if status3-status2 != 2 || spec3 != spec2 {
		t.Errorf("drift and its repair cost %d status and %d spec writes, want 2 and 0", status3-status2, spec3-spec2)
	}

	// 4. Every status field OpenShift's agent writes, observedGeneration for the spec of the
	// config the node is in.
	m = awaitMCN(t, ctx, name, "observedGeneration at the spec's generation", func(m *mcfgv1.MachineConfigNode) bool {
		return m.Status.ObservedGeneration == m.Generation && m.Spec.ConfigVersion.Desired == r2
	})
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(mcfgv1.GroupVersion.WithKind("MachineConfigNode"))
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, stored); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{"conditions"}, {"observedGeneration"}, {"configVersion", "current"}, {"configVersion", "desired"}} {
		if _, ok, _ := unstructured.NestedFieldNoCopy(stored.Object, append([]string{"status"}, path...)...); !ok {
			t.Errorf("the stored MachineConfigNode's status has no %s (OpenShift's agent always writes it)", strings.Join(path, "."))
		}
	}

	// 5. What an admin sees.
	out, err := env.Kubectl(ctx, "get", "mcn", name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get mcn:\n%s", out)
	wantRow(t, out, []string{"NAME", "POOLNAME", "DESIREDCONFIG", "CURRENTCONFIG", "UPDATED", "AGE"}, []string{name, pool, r2, r2, "True"})
	out, err = env.Kubectl(ctx, "get", "mcn", name, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get mcn -o wide:\n%s", out)
	wantRow(t, out, []string{"NAME", "POOLNAME", "DESIREDCONFIG", "CURRENTCONFIG", "UPDATED", "AGE", "UPDATEPREPARED", "UPDATEEXECUTED",
		"UPDATEPOSTACTIONCOMPLETE", "UPDATECOMPLETE", "RESUMED", "UPDATEDFILESANDOS", "CORDONEDNODE", "DRAINEDNODE", "REBOOTEDNODE", "UNCORDONEDNODE"},
		[]string{name, pool, r2, r2, "True", "", "True", "True", "True", "True", "True", "True", "True", "True", "True", "True"})
}

// TestMachineConfigNodeWriteFailures: while every read and write of its MachineConfigNode
// fails, the agent still updates its node to Done; once they work again the status catches up
// by itself.
func TestMachineConfigNodeWriteFailures(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "mcn-fail", "mcn-fail-0"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	startAgent(t, name, root)
	awaitMCN(t, ctx, name, "Updated in "+r0, updatedIn(r0))

	mcnWrites.fail(name, true)
	createPoolConfig(t, ctx, pool, "50-"+pool+"-policy", map[string]string{"/etc/containers/policy.json": "{}"})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	awaitNode(t, ctx, name, "Done in "+r1+" with its MachineConfigNode failing", doneIn(r1))
	if m := getMCN(t, ctx, name); m.Status.ConfigVersion.Current != r0 {
		t.Fatalf("status moved while every write failed: %+v", m.Status.ConfigVersion)
	}
	mcnWrites.fail(name, false)
	m := awaitMCN(t, ctx, name, "caught up with "+r1, updatedIn(r1))
	wantConditions(t, m, map[mcfgv1.StateProgress]metav1.ConditionStatus{
		mcfgv1.MachineConfigNodeUpdatePrepared: metav1.ConditionTrue, mcfgv1.MachineConfigNodeUpdatePostActionComplete: metav1.ConditionTrue,
		mcfgv1.MachineConfigNodeUpdateComplete: metav1.ConditionTrue,
	})
}

// customPool creates a pool selecting node-role.kubernetes.io/<name> and its first config with
// files, and returns the rendered config it targets.
func customPool(t *testing.T, ctx context.Context, name string, files map[string]string) string {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: name}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}},
		},
	}
	create(t, ctx, p)
	createPoolConfig(t, ctx, name, "00-"+name, files)
	return awaitPoolTarget(t, ctx, name, "")
}

func createPoolConfig(t *testing.T, ctx context.Context, pool, name string, files map[string]string) {
	t.Helper()
	mc := machineConfig(name, files)
	mc.Labels = map[string]string{protocol.RoleLabel: pool}
	create(t, ctx, mc)
}

func renderedConfig(t *testing.T, ctx context.Context, name string) *mcfgv1.MachineConfig {
	t.Helper()
	mc := &mcfgv1.MachineConfig{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func awaitPoolTarget(t *testing.T, ctx context.Context, pool, previous string) string {
	t.Helper()
	var target string
	eventually(t, 30*time.Second, "pool "+pool+" targeting a new rendered config", func() (bool, string) {
		p := &mcfgv1.MachineConfigPool{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
			return false, err.Error()
		}
		target = p.Spec.Configuration.Name
		return target != "" && target != previous, fmt.Sprintf("target=%q", target)
	})
	return target
}

func getMCN(t *testing.T, ctx context.Context, name string) *mcfgv1.MachineConfigNode {
	t.Helper()
	m := &mcfgv1.MachineConfigNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func awaitMCN(t *testing.T, ctx context.Context, name, what string, cond func(*mcfgv1.MachineConfigNode) bool) *mcfgv1.MachineConfigNode {
	t.Helper()
	var m *mcfgv1.MachineConfigNode
	eventually(t, 60*time.Second, "MachineConfigNode "+name+" "+what, func() (bool, string) {
		m = &mcfgv1.MachineConfigNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
			return false, err.Error()
		}
		return cond(m), fmt.Sprintf("spec %+v status %+v", m.Spec, m.Status)
	})
	return m
}

// updatedIn: the spec and the status agree the node is in config and Updated.
func updatedIn(config string) func(*mcfgv1.MachineConfigNode) bool {
	return func(m *mcfgv1.MachineConfigNode) bool {
		return m.Spec.ConfigVersion.Desired == config && m.Status.ConfigVersion != nil && m.Status.ConfigVersion.Current == config &&
			meta.IsStatusConditionTrue(m.Status.Conditions, string(mcfgv1.MachineConfigNodeUpdated))
	}
}

// settledCounts counts name's MachineConfigNode writes once none came for a quiet while. The
// state a test waits for shows before the writer's request returns and is counted, and a
// write still on its way belongs to the step before: a fixed sleep, outlasted by a slow
// machine, would count it in the next. Writes that never stop fail the test after a minute.
func settledCounts(t *testing.T, name string) (status, spec int) {
	t.Helper()
	const quiet = 2 * time.Second
	status, spec = mcnWrites.counts(name)
	deadline, since := time.Now().Add(time.Minute), time.Now()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			t.Fatalf("MachineConfigNode %s still written after a minute (%d status, %d spec writes so far)", name, status, spec)
		}
		time.Sleep(100 * time.Millisecond)
		if s, sp := mcnWrites.counts(name); s != status || sp != spec {
			status, spec, since = s, sp, time.Now()
		}
	}
	return status, spec
}

func checkWrites(t *testing.T, update string, status, spec, maxStatus int) {
	t.Helper()
	if status < 1 || status > maxStatus {
		t.Errorf("%s update: %d MachineConfigNode status writes, want 1 to %d", update, status, maxStatus)
	}
	if spec != maxSpecWritesPerUpdate {
		t.Errorf("%s update: %d MachineConfigNode spec writes, want %d (the new desired config)", update, spec, maxSpecWritesPerUpdate)
	}
}

func wantConditions(t *testing.T, m *mcfgv1.MachineConfigNode, want map[mcfgv1.StateProgress]metav1.ConditionStatus) {
	t.Helper()
	for typ, status := range want {
		c := meta.FindStatusCondition(m.Status.Conditions, string(typ))
		if c == nil || c.Status != status {
			t.Errorf("%s: condition %s = %+v, want %s", m.Name, typ, c, status)
		}
	}
}

// wantRow checks kubectl's table: the header's columns and the row's first cells ("" skips one).
func wantRow(t *testing.T, table string, header, row []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row:\n%s", table)
	}
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != strings.Join(header, " ") {
		t.Errorf("columns %v, want %v", got, header)
	}
	cells := strings.Fields(lines[1])
	for i, want := range row {
		if want != "" && (i >= len(cells) || cells[i] != want) {
			t.Errorf("column %s = %q, want %q (row %q)", header[i], at(cells, i), want, lines[1])
		}
	}
}

func at(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}
