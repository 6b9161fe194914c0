//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// The explain tests write what a real cluster holds when each situation arises (no controller
// runs here): Nodes with the agent's and the drain controller's annotations and the kubelet's
// Ready condition, pools with the node controller's conditions, MachineConfigNodes with the
// status the agent writes (machineconfignode.Next, the agent's own core), the events the agent
// and the controllers emit, and pacing policies with the status the node controller records.
// Then `mco explain` reads them back through the API server. Each case has its own pool and
// nodes (label explain-test=<case>), so the cases share the package's control plane.

// explainCase is one situation: a pool selecting nodes labelled explain-test=name.
type explainCase struct {
	t    *testing.T
	ctx  context.Context
	name string
}

func newExplainCase(t *testing.T, name string) *explainCase {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return &explainCase{t: t, ctx: ctx, name: name}
}

func (e *explainCase) old() string    { return "rendered-" + e.name + "-old" }
func (e *explainCase) target() string { return "rendered-" + e.name + "-new" }

// pool creates the case's pool targeting target(), then sets its status conditions.
func (e *explainCase) pool(edit func(*mcfgv1.MachineConfigPool), conds ...mcfgv1.MachineConfigPoolCondition) *mcfgv1.MachineConfigPool {
	e.t.Helper()
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: e.name, Labels: map[string]string{"explain-test": e.name}}}
	p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"explain-test": e.name}}
	p.Spec.Configuration.Name = e.target()
	if edit != nil {
		edit(p)
	}
	e.must(controlPlane.Client.Create(e.ctx, p))
	if len(conds) > 0 {
		p.Status.Conditions = conds
		p.Status.Configuration.Name = e.old()
		e.must(controlPlane.Client.Status().Update(e.ctx, p))
	}
	return p
}

// node creates a Node of the case's pool with annotations (key, value pairs), Ready since
// readySince or, when notReadySince is set, NotReady since then.
func (e *explainCase) node(name string, notReadySince time.Duration, annotations ...string) *corev1.Node {
	e.t.Helper()
	a := map[string]string{}
	for i := 0; i+1 < len(annotations); i += 2 {
		a[annotations[i]] = annotations[i+1]
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: a, Labels: map[string]string{"explain-test": e.name}}}
	n.Spec.Unschedulable = strings.HasPrefix(a[protocol.DesiredDrainAnnotation], "drain-")
	e.must(controlPlane.Client.Create(e.ctx, n))
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour)), LastHeartbeatTime: metav1.Now()}
	if notReadySince > 0 {
		ready.Status, ready.Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
		ready.LastTransitionTime = metav1.NewTime(time.Now().Add(-notReadySince))
	}
	n.Status.Conditions = []corev1.NodeCondition{ready}
	e.must(controlPlane.Client.Status().Update(e.ctx, n))
	return n
}

// machineConfigNode creates node's MachineConfigNode as its controller does and the status
// the agent writes after steps.
func (e *explainCase) machineConfigNode(n *corev1.Node, steps ...machineconfignode.Step) {
	e.t.Helper()
	m, err := machineconfignode.For(n, e.name)
	e.must(err)
	e.must(controlPlane.Client.Create(e.ctx, m))
	for _, s := range steps {
		m.Status = machineconfignode.Next(n.Name, m.Status, s, metav1.Now())
	}
	e.must(controlPlane.Client.Status().Update(e.ctx, m))
}

// event records an event about a Node or pool as a recorder does (namespace default).
func (e *explainCase) event(kind, name, typ, reason, msg string, ago time.Duration) {
	e.t.Helper()
	at := metav1.NewTime(time.Now().Add(-ago))
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: name + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, APIVersion: map[string]string{"Node": "v1"}[kind]},
		Type:           typ, Reason: reason, Message: msg, Source: corev1.EventSource{Component: "explain-test"},
		FirstTimestamp: at, LastTimestamp: at, Count: 1,
	}
	e.must(controlPlane.Client.Create(e.ctx, ev))
}

// policy creates a MachineConfigPoolRollout selecting the case's pool with the status entry
// the node controller records for it.
func (e *explainCase) policy(name string, spec rolloutv1.MachineConfigPoolRolloutSpec, entry rolloutv1.PoolRolloutStatus) {
	e.t.Helper()
	spec.PoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"explain-test": e.name}}
	p := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	e.must(controlPlane.Client.Create(e.ctx, p))
	if entry.Name != "" {
		p.Status.Pools = []rolloutv1.PoolRolloutStatus{entry}
		p.Status.Phase, p.Status.Reason = entry.Phase, entry.Reason
		e.must(controlPlane.Client.Status().Update(e.ctx, p))
	}
}

func (e *explainCase) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// explain runs `mco explain` and checks its text says every phrase.
func (e *explainCase) explain(object string, phrases []string, flags ...string) string {
	e.t.Helper()
	args := append([]string{"explain", object, "--kubeconfig=" + controlPlane.KubeconfigPath}, flags...)
	stdout, stderr, code := runMCO(e.t, args...)
	if code != 0 {
		e.t.Fatalf("mco explain %s: exit %d: %s", object, code, stderr)
	}
	for _, p := range phrases {
		if !strings.Contains(stdout, p) {
			e.t.Errorf("mco explain %s does not say %q:\n%s", object, p, stdout)
		}
	}
	return stdout
}

func condTrue(t mcfgv1.MachineConfigPoolConditionType, reason, msg string) mcfgv1.MachineConfigPoolCondition {
	return mcfgv1.MachineConfigPoolCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

func TestExplainDrift(t *testing.T) {
	e := newExplainCase(t, "x-drift")
	reason := `unexpected on-disk state validating against ` + e.old() + `: content mismatch for file: "/etc/chrony.conf"`
	e.pool(func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = e.old() },
		condTrue(mcfgv1.MachineConfigPoolNodeDegraded, "1 nodes are reporting degraded status on sync", "Node x-drift-0 is reporting: "+reason),
		condTrue(mcfgv1.MachineConfigPoolDegraded, "1 nodes are reporting degraded status on sync", "Node x-drift-0 is reporting: "+reason))
	n := e.node("x-drift-0", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.old(),
		protocol.StateAnnotation, "Degraded", protocol.ReasonAnnotation, reason)
	e.machineConfigNode(n, machineconfignode.Step{Kind: machineconfignode.Done, Current: e.old(), Desired: e.old()},
		machineconfignode.Step{Kind: machineconfignode.Degraded, Current: e.old(), Desired: e.old(), Message: reason})
	e.event("Node", n.Name, corev1.EventTypeWarning, "ConfigDriftDetected", reason, time.Minute)

	e.explain("node/x-drift-0", []string{
		"node/x-drift-0: Degraded (ConfigDriftDetected) in mcp/x-drift",
		"/etc/chrony.conf on the node is not what rendered-x-drift-old wrote (content mismatch for file)",
		"undo the change to /etc/chrony.conf on the node",
		"`touch /run/machine-config-daemon-force`",
		"event Warning ConfigDriftDetected on node/x-drift-0",
		"machineconfignode/x-drift-0: pool x-drift, desired rendered-x-drift-old",
		"machineconfignode/x-drift-0 condition NodeDegraded:",
	})
	e.explain("mcp/x-drift", []string{
		"mcp/x-drift: Degraded: 0 of 1 nodes run rendered-x-drift-old",
		"node x-drift-0 is Degraded (ConfigDriftDetected): /etc/chrony.conf",
		"`mco explain node/x-drift-0`",
	})
}

func TestExplainDrainBlockedByPDB(t *testing.T) {
	e := newExplainCase(t, "x-pdb")
	report := "pod shop/web-0 cannot be evicted: PodDisruptionBudget shop/web-pdb (The disruption budget web-pdb needs 2 healthy pods and has 2 currently); pod shop/web-1 cannot be evicted: PodDisruptionBudget shop/web-pdb"
	e.pool(nil, condTrue(poolcondition.DrainBlocked, "1 nodes have drains blocked", "Drain of node x-pdb-0 is blocked: "+report))
	n := e.node("x-pdb-0", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(),
		protocol.StateAnnotation, "Working", protocol.DesiredDrainAnnotation, protocol.DrainRequest(e.target()),
		protocol.DrainStartedAtAnnotation, time.Now().Add(-14*time.Minute).UTC().Format(time.RFC3339),
		protocol.DrainBlockedAnnotation, report)
	e.machineConfigNode(n, machineconfignode.Step{Kind: machineconfignode.Prepared, Current: e.old(), Desired: e.target(), Drain: true, Reboot: true},
		machineconfignode.Step{Kind: machineconfignode.DrainBlocked, Current: e.old(), Desired: e.target(), Message: report})
	e.event("Node", n.Name, corev1.EventTypeWarning, "DrainBlocked", "Drain running for 10m0s is blocked: "+report, 4*time.Minute)

	e.explain("nodes/x-pdb-0", []string{
		"node/x-pdb-0: drain blocked for rendered-x-pdb-new in mcp/x-pdb",
		"(since ", ", 14m)",
		"the drain is blocked: pod shop/web-0 cannot be evicted: PodDisruptionBudget shop/web-pdb",
		"`kubectl get pdb -n shop web-pdb -o wide`",
		"`kubectl delete pod -n shop web-0`", "`kubectl delete pod -n shop web-1`",
		"node is cordoned",
		"event Warning DrainBlocked on node/x-pdb-0 4m ago",
	})
	e.explain("machineconfigpool/x-pdb", []string{"drains are blocked (DrainBlocked): Drain of node x-pdb-0 is blocked: pod shop/web-0",
		"`mco explain node/x-pdb-0` names the budgets and pods blocking its drain"})
}

func TestExplainUnreconcilable(t *testing.T) {
	e := newExplainCase(t, "x-unrec")
	reason := "cannot move from rendered-x-unrec-old to rendered-x-unrec-new on a running node: storage.directories \"/var/lib/data\": directories cannot be added or changed on a running node"
	e.pool(nil, condTrue(mcfgv1.MachineConfigPoolNodeDegraded, "1 nodes are reporting degraded status on sync", "Node x-unrec-0 is reporting: "+reason))
	n := e.node("x-unrec-0", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(),
		protocol.StateAnnotation, "Unreconcilable", protocol.ReasonAnnotation, reason)
	e.machineConfigNode(n, machineconfignode.Step{Kind: machineconfignode.Unreconcilable, Current: e.old(), Desired: e.target(), Message: reason})
	e.event("Node", n.Name, corev1.EventTypeWarning, "FailedToReconcile", reason, time.Minute)
	e.explain("node/x-unrec-0", []string{
		"Unreconcilable (FailedToReconcile) in mcp/x-unrec",
		"stuck between configs: runs rendered-x-unrec-old, asked for rendered-x-unrec-new",
		`cannot be changed on a running node: cannot move from rendered-x-unrec-old to rendered-x-unrec-new on a running node: storage.directories "/var/lib/data"`,
		"nothing on the node was changed",
		"revert or remove the MachineConfig change",
	})

	// The render side: a pool whose MachineConfigs do not render keeps its last target.
	r := newExplainCase(t, "x-render")
	msg := "MachineConfig 99-x-render-bad: spec.config.storage.files[0].path (line 7 col 15): must be an absolute path"
	r.pool(func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = r.old() },
		condTrue(mcfgv1.MachineConfigPoolRenderDegraded, "RenderFailed", msg), condTrue(mcfgv1.MachineConfigPoolDegraded, "RenderFailed", msg))
	r.node("x-render-0", 0, protocol.CurrentConfigAnnotation, r.old(), protocol.DesiredConfigAnnotation, r.old(), protocol.StateAnnotation, "Done")
	r.explain("mcp/x-render", []string{
		"mcp/x-render: Degraded: 1 of 1 nodes run rendered-x-render-old; held: mcp/x-render's MachineConfigs do not render (RenderDegraded)",
		"MachineConfig 99-x-render-bad: spec.config.storage.files[0].path",
		"keeps its last target rendered-x-render-old",
		"mco validate",
	})
}

func TestExplainNotBackAfterReboot(t *testing.T) {
	e := newExplainCase(t, "x-lost")
	e.pool(nil, condTrue(poolcondition.NodeUnresponsive, "NotReadyDuringUpdate", "Node x-lost-0 has not been Ready since ... while updating to rendered-x-lost-new (threshold 15m0s)"))
	e.node("x-lost-0", 20*time.Minute, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(),
		protocol.StateAnnotation, "Working", protocol.DesiredDrainAnnotation, protocol.DrainRequest(e.target()),
		protocol.LastAppliedDrainAnnotation, protocol.DrainRequest(e.target()), protocol.PostConfigActionAnnotation, protocol.PostConfigActionRebooting)
	e.event("MachineConfigPool", "x-lost", corev1.EventTypeWarning, "NodeUnresponsive", "Node x-lost-0 has not been Ready since ... while updating to rendered-x-lost-new", 5*time.Minute)
	e.explain("node/x-lost-0", []string{
		"node/x-lost-0: not back from its update: NotReady for 20m in mcp/x-lost",
		"past the 15m0s threshold", "went down for the reboot the update needs and did not come back",
		"starts no further node", "`kubectl delete node x-lost-0`",
		"node condition Ready=Unknown", "event Warning NodeUnresponsive on machineconfigpool/x-lost 5m ago: Node x-lost-0",
	})
	e.explain("mcp/x-lost", []string{
		"held: a node did not come back from its update (NodeUnresponsive)",
		"Doing: rebooting x-lost-0",
		"Next: no further node of the pool starts until it is Ready again or its Node is deleted",
	})
	// Under a longer threshold the same node is still only rebooting.
	e.explain("node/x-lost-0", []string{"node/x-lost-0: rebooting into rendered-x-lost-new", "the pool reports it unresponsive"}, "--node-not-ready-threshold=1h")
}

func TestExplainPausedPool(t *testing.T) {
	e := newExplainCase(t, "x-paused")
	e.pool(func(p *mcfgv1.MachineConfigPool) { p.Spec.Paused = true },
		condTrue(poolcondition.PendingUpdate, "DrainAndReboot", "unpausing reboots 2 nodes: kernel argument audit=1"))
	for _, name := range []string{"x-paused-0", "x-paused-1"} {
		e.node(name, 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.old(), protocol.StateAnnotation, "Done")
	}
	e.explain("node/x-paused-1", []string{
		"waiting: mcp/x-paused holds its update to rendered-x-paused-new",
		"mcp/x-paused is paused (spec.paused=true)",
		"PendingUpdate (DrainAndReboot): unpausing reboots 2 nodes: kernel argument audit=1",
		`kubectl patch mcp x-paused --type merge -p '{"spec":{"paused":false}}'`,
	})
	e.explain("mcp/x-paused", []string{
		"mcp/x-paused: Paused: 0 of 2 nodes run rendered-x-paused-new; held: mcp/x-paused is paused",
		"Doing: waiting x-paused-0, x-paused-1",
		"Next: nothing until the pool is unpaused; then unpausing reboots 2 nodes",
	})
}

func TestExplainPacedPool(t *testing.T) {
	e := newExplainCase(t, "x-soak")
	e.pool(nil)
	e.node("x-soak-0", 0, protocol.CurrentConfigAnnotation, e.target(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Done")
	e.node("x-soak-1", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.old(), protocol.StateAnnotation, "Done")
	e.policy("x-soak", rolloutv1.MachineConfigPoolRolloutSpec{Canary: &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}, Soak: metav1.Duration{Duration: time.Hour}},
		rolloutv1.PoolRolloutStatus{Name: "x-soak", Target: e.target(), Phase: rolloutv1.PhaseCanary, Reason: "canary done: waiting for `mco rollout resume` or soak",
			Batch: 1, BatchFinishedAt: explainPtr(metav1.NewTime(time.Now().Add(-10 * time.Minute))), NodesDone: 1, NodesRemaining: 1})
	e.explain("node/x-soak-1", []string{
		"waiting: mcp/x-soak holds its update to rendered-x-soak-new",
		"paced by mcprollout/x-soak: Canary (canary done: waiting for `mco rollout resume` or soak)",
		"the next batch starts at ", "(in 50m) when the soak ends, or on `mco rollout resume mcp/x-soak`",
		"approve the next batch now: `mco rollout resume mcp/x-soak`",
	})
	e.explain("mcp/x-soak", []string{
		"mcp/x-soak: Updating: 1 of 2 nodes run rendered-x-soak-new; held: paced by mcprollout/x-soak",
		"mcprollout/x-soak pool x-soak: phase Canary, batch 1, done 1, remaining 1",
	})

	w := newExplainCase(t, "x-window")
	w.pool(nil)
	w.node("x-window-0", 0, protocol.CurrentConfigAnnotation, w.old(), protocol.DesiredConfigAnnotation, w.old(), protocol.StateAnnotation, "Done")
	w.policy("x-window", rolloutv1.MachineConfigPoolRolloutSpec{MaintenanceWindows: []rolloutv1.MaintenanceWindow{{Start: "02:00", Duration: &metav1.Duration{Duration: 2 * time.Hour}}}},
		rolloutv1.PoolRolloutStatus{Name: "x-window", Target: w.target(), Phase: rolloutv1.PhaseWaitingForWindow, Reason: "waiting for window 02:00 UTC",
			NextWindowStart: explainPtr(metav1.NewTime(time.Now().Add(3*time.Hour + 10*time.Minute))), NodesRemaining: 1})
	w.explain("node/x-window-0", []string{
		"paced by mcprollout/x-window: WaitingForWindow (waiting for window 02:00 UTC)",
		"the next node starts at ", "(in 3h1", "m) when the maintenance window opens",
		"change mcprollout/x-window's maintenanceWindows",
	})
}

func TestExplainUpdatingSteps(t *testing.T) {
	e := newExplainCase(t, "x-steps")
	e.pool(func(p *mcfgv1.MachineConfigPool) { p.Spec.MaxUnavailable = explainPtr(intstr.FromInt32(3)) })
	drain := protocol.DrainRequest(e.target())
	e.node("x-steps-drain", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Working",
		protocol.DesiredDrainAnnotation, drain, protocol.DrainStartedAtAnnotation, time.Now().Add(-2*time.Minute).UTC().Format(time.RFC3339))
	e.node("x-steps-apply", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Working",
		protocol.DesiredDrainAnnotation, drain, protocol.LastAppliedDrainAnnotation, drain)
	e.node("x-steps-reboot", 90*time.Second, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Working",
		protocol.DesiredDrainAnnotation, drain, protocol.LastAppliedDrainAnnotation, drain, protocol.PostConfigActionAnnotation, protocol.PostConfigActionRebooting)
	done := e.node("x-steps-done", 0, protocol.CurrentConfigAnnotation, e.target(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Done")
	e.machineConfigNode(done, machineconfignode.Step{Kind: machineconfignode.Prepared, Current: e.old(), Desired: e.target()},
		machineconfignode.Step{Kind: machineconfignode.Applied, Current: e.old(), Desired: e.target()},
		machineconfignode.Step{Kind: machineconfignode.Done, Current: e.target(), Desired: e.target()})

	e.explain("node/x-steps-drain", []string{"draining for rendered-x-steps-new", "pods are being evicted", "--drain-blocked-threshold"})
	e.explain("node/x-steps-apply", []string{"updating to rendered-x-steps-new in mcp/x-steps: cordoned", "drained and cordoned; the agent is applying"})
	e.explain("node/x-steps-reboot", []string{"rebooting into rendered-x-steps-new", "NotReady since", "(1m ago)"})
	e.explain("node/x-steps-done", []string{"Done: runs rendered-x-steps-new, the target of mcp/x-steps",
		"machineconfignode/x-steps-done: pool x-steps, desired rendered-x-steps-new, status current rendered-x-steps-new",
		"machineconfignode/x-steps-done condition Updated:"})
	e.explain("mcp/x-steps", []string{"Updating: 1 of 4 nodes run rendered-x-steps-new",
		"Doing: rebooting x-steps-reboot; cordoned x-steps-apply; draining x-steps-drain"})

	// The shell completes kinds, then names from the cluster.
	for _, tc := range []struct {
		word      string
		want, not []string
	}{
		{"", []string{"node/\n", "mcp/\n"}, nil},
		{"node/x-steps-d", []string{"node/x-steps-drain\n", "node/x-steps-done\n"}, []string{"x-steps-apply"}},
		{"mcp/x-ste", []string{"mcp/x-steps\n"}, []string{"node/"}},
	} {
		stdout, _, _ := runMCO(t, "__complete", "explain", "--kubeconfig="+controlPlane.KubeconfigPath, tc.word)
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("completing %q: no %q in:\n%s", tc.word, w, stdout)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(stdout, w) {
				t.Errorf("completing %q: %q in:\n%s", tc.word, w, stdout)
			}
		}
	}

	// -o json carries the same for programs.
	stdout, stderr, code := runMCO(t, "explain", "node/x-steps-drain", "-o", "json", "--kubeconfig="+controlPlane.KubeconfigPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var x explain.Explanation
	if err := json.Unmarshal([]byte(stdout), &x); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if x.Object != "node/x-steps-drain" || !strings.HasPrefix(x.Summary, "draining") || len(x.Evidence) == 0 {
		t.Errorf("json: %+v", x)
	}
}

func TestExplainTwoPoliciesAndDegradedNodes(t *testing.T) {
	e := newExplainCase(t, "x-two")
	e.pool(nil, condTrue(mcfgv1.MachineConfigPoolNodeDegraded, "2 nodes are reporting degraded status on sync", "..."))
	e.node("x-two-0", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Degraded",
		protocol.ReasonAnnotation, "config rendered-x-two-new is written and needs a reboot, but 3 reboots asked for over 15m0s never happened; check the node's systemd")
	e.event("Node", "x-two-0", corev1.EventTypeWarning, "RebootFailed", "config rendered-x-two-new is written and needs a reboot", time.Minute)
	e.node("x-two-1", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Degraded",
		protocol.ReasonAnnotation, `cannot move to rendered-x-two-new: kernelType: "realtime" cannot be applied on this host`)
	e.event("Node", "x-two-1", corev1.EventTypeWarning, "UnsupportedOSChange", "cannot move to rendered-x-two-new", time.Minute)
	e.node("x-two-2", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.old(), protocol.StateAnnotation, "Done")
	e.policy("x-two-a", rolloutv1.MachineConfigPoolRolloutSpec{}, rolloutv1.PoolRolloutStatus{})
	e.policy("x-two-b", rolloutv1.MachineConfigPoolRolloutSpec{}, rolloutv1.PoolRolloutStatus{})
	e.explain("mcp/x-two", []string{
		"mcp/x-two: Degraded: 0 of 3 nodes run rendered-x-two-new; held: two policies select the pool",
		"node x-two-0 is Degraded (RebootFailed)", "node x-two-1 is Degraded (UnsupportedOSChange)",
		"mcprollout/x-two-a and mcprollout/x-two-b",
		"`mco explain node/x-two-0`", "`mco explain node/x-two-1`",
	})
	e.explain("node/x-two-0", []string{"Degraded (RebootFailed) in mcp/x-two", "reboot the node by hand"})
	e.explain("node/x-two-1", []string{"Degraded (UnsupportedOSChange)", "revert the MachineConfig field"})
}

func TestExplainRefusesBadArguments(t *testing.T) {
	testenv.Integration(t)
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "pod/x"}, `want node/NAME or mcp/NAME, got "pod/x"`},
		{[]string{"explain", "node/"}, `want node/NAME or mcp/NAME, got "node/"`},
		{[]string{"explain", "node/x-nope", "-o", "yaml"}, `--output: unknown format "yaml"`},
		{[]string{"explain", "node/x-nope"}, `node "x-nope" not found`},
		{[]string{"explain", "mcp/x-nope"}, `machineconfigpool "x-nope" not found`},
	} {
		_, stderr, code := runMCO(t, append(tc.args, kubeconfig)...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 saying %q", tc.args, code, stderr, tc.want)
		}
	}
}

func explainPtr[T any](v T) *T { return &v }
