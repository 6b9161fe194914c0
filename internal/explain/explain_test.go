package explain

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollback"
)

const (
	driftReason   = `unexpected on-disk state validating against rendered-worker-old: content mismatch for file: "/etc/chrony.conf"`
	bootFailed    = "NodeBootFailed: kubelet not healthy within 10m0s after the reboot into rendered-worker-new (no kubelet process is running); reverted to rendered-worker-old"
	blockedPDB    = "pod shop/web-0 cannot be evicted: PodDisruptionBudget shop/web-pdb (The disruption budget web-pdb needs 2 healthy pods and has 2 currently)"
	unreconcilabl = `cannot move from rendered-worker-old to rendered-worker-new on a running node: storage.directories "/var/lib/data": directories cannot be added or changed on a running node`
	plantedLink   = `refusing rendered-worker-new, nothing was drained or written: file /etc/x/f: /etc/x is a symbolic link to "../../../../../../../../tmp", which leaves the host root`
)

func TestNode(t *testing.T) {
	a := protocol.StateAnnotation
	for _, tc := range []struct {
		name     string
		node     corev1.Node
		pool     func(*mcfgv1.MachineConfigPool)
		others   []corev1.Node
		events   []corev1.Event
		policies []rolloutv1.MachineConfigPoolRollout
		want     want
	}{{
		name: "drift names the file",
		node: workerNode("w1", oldConfig, oldConfig, a, "Degraded", protocol.ReasonAnnotation, driftReason),
		events: []corev1.Event{
			event("Node", "w1", corev1.EventTypeWarning, "ConfigDriftDetected", driftReason, time.Minute),
		},
		want: want{
			summary:  []string{"Degraded (ConfigDriftDetected)"},
			why:      []string{"/etc/chrony.conf on the node is not what rendered-worker-old wrote (content mismatch for file)"},
			next:     []string{"reports Done as soon as it matches again"},
			youCan:   []string{"undo the change to /etc/chrony.conf", "/run/machine-config-daemon-force", "kubectl get mc rendered-worker-old"},
			evidence: []string{"annotation state=Degraded", "event Warning ConfigDriftDetected on node/w1 1m ago"},
		},
	}, {
		name: "a broken boot the node reverted",
		node: workerNode("w1", oldConfig, newConfig, a, "Degraded", protocol.ReasonAnnotation, bootFailed),
		events: []corev1.Event{
			event("Node", "w1", corev1.EventTypeWarning, "NodeBootFailed", bootFailed, time.Minute),
		},
		want: want{
			summary:  []string{"Degraded (NodeBootFailed)"},
			why:      []string{"did not come back healthy in time", "kubelet not healthy within 10m0s after the reboot into rendered-worker-new (no kubelet process is running); reverted to rendered-worker-old"},
			next:     []string{"runs its previous config (rendered-worker-old) and stays cordoned", "does not try rendered-worker-new again"},
			youCan:   []string{"`mco node retry w1`", "fix or delete the MachineConfig", "journalctl -u mco-boot-guard"},
			evidence: []string{"event Warning NodeBootFailed on node/w1 1m ago"},
		},
	}, {
		name: "drain blocked by a PodDisruptionBudget names pods and budget",
		node: workerNode("w1", oldConfig, newConfig, a, "Working",
			protocol.DesiredDrainAnnotation, "drain-"+newConfig,
			protocol.DrainStartedAtAnnotation, now.Add(-12*time.Minute).Format(time.RFC3339),
			protocol.DrainBlockedAnnotation, blockedPDB),
		events: []corev1.Event{event("Node", "w1", corev1.EventTypeWarning, "DrainBlocked", "Drain running for 10m0s is blocked: "+blockedPDB, 2*time.Minute)},
		want: want{
			summary:  []string{"drain blocked for rendered-worker-new in mcp/worker"},
			doing:    []string{"draining", "(since 2026-11-23T11:48:00Z, 12m)"},
			why:      []string{"pod shop/web-0 cannot be evicted: PodDisruptionBudget shop/web-pdb"},
			next:     []string{"retries each eviction"},
			youCan:   []string{"`kubectl get pdb -n shop web-pdb -o wide`", "`kubectl delete pod -n shop web-0`"},
			evidence: []string{"annotation drain-blocked=pod shop/web-0", "event Warning DrainBlocked on node/w1"},
		},
	}, {
		name: "a drain still short of the threshold is only draining",
		node: workerNode("w1", oldConfig, newConfig, a, "Working",
			protocol.DesiredDrainAnnotation, "drain-"+newConfig,
			protocol.DrainStartedAtAnnotation, now.Add(-3*time.Minute).Format(time.RFC3339)),
		want: want{summary: []string{"draining for rendered-worker-new"}, next: []string{"--drain-blocked-threshold"}},
	}, {
		name:   "unreconcilable field",
		node:   workerNode("w1", oldConfig, newConfig, a, "Unreconcilable", protocol.ReasonAnnotation, unreconcilabl),
		events: []corev1.Event{event("Node", "w1", corev1.EventTypeWarning, "FailedToReconcile", unreconcilabl, time.Minute)},
		want: want{
			summary: []string{"Unreconcilable (FailedToReconcile)"},
			doing:   []string{"stuck between configs: runs rendered-worker-old, asked for rendered-worker-new"},
			why:     []string{"cannot be changed on a running node", `storage.directories "/var/lib/data"`},
			next:    []string{"nothing on the node was changed"},
			youCan:  []string{"revert or remove the MachineConfig change", "mco plan -f"},
		},
	}, {
		name:   "a link planted on the node in the way of a file",
		node:   workerNode("w1", oldConfig, newConfig, a, "Degraded", protocol.ReasonAnnotation, plantedLink),
		events: []corev1.Event{event("Node", "w1", corev1.EventTypeWarning, "UpdateRefused", plantedLink, time.Minute)},
		want: want{
			summary: []string{"Degraded (UpdateRefused)"},
			why:     []string{"a symbolic link on the node is in the way of the new config's /etc/x/f: /etc/x"},
			next:    []string{"nothing was drained or written", "goes on once the link is gone"},
			youCan:  []string{"`rm /etc/x` on the node", "delete or fix the MachineConfig that writes /etc/x/f"},
		},
	}, {
		name: "not back after a reboot past the threshold",
		node: notReady(workerNode("w1", oldConfig, newConfig, a, "Working",
			protocol.DesiredDrainAnnotation, "drain-"+newConfig, protocol.LastAppliedDrainAnnotation, "drain-"+newConfig,
			protocol.PostConfigActionAnnotation, "Rebooting"), now.Add(-20*time.Minute)),
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Status.Conditions = append(p.Status.Conditions, condition(poolcondition.NodeUnresponsive, "NotReadyDuringUpdate",
				"Node w1 has not been Ready since 2026-11-23T11:40:00Z while updating to rendered-worker-new (threshold 15m0s)"))
		},
		events: []corev1.Event{
			event("MachineConfigPool", "worker", corev1.EventTypeWarning, "NodeUnresponsive", "Node w1 has not been Ready since 2026-11-23T11:40:00Z while updating to rendered-worker-new", 5*time.Minute),
			event("MachineConfigPool", "worker", corev1.EventTypeWarning, "NodeUnresponsive", "Node w10 has not been Ready", 5*time.Minute),
		},
		want: want{
			summary:  []string{"not back from its update: NotReady for 20m"},
			why:      []string{"not been Ready since 2026-11-23T11:40:00Z (20m ago, past the 15m0s threshold)", "did not come back"},
			next:     []string{"NodeUnresponsive", "starts no further node"},
			youCan:   []string{"`kubectl delete node w1`"},
			evidence: []string{"node condition Ready=Unknown since 2026-11-23T11:40:00Z", "event Warning NodeUnresponsive on machineconfigpool/worker 5m ago: Node w1 has", "condition NodeUnresponsive=True"},
		},
	}, {
		name: "rebooting within the threshold",
		node: notReady(workerNode("w1", oldConfig, newConfig, a, "Working", protocol.PostConfigActionAnnotation, "Rebooting"), now.Add(-2*time.Minute)),
		want: want{
			summary: []string{"rebooting into rendered-worker-new"},
			doing:   []string{"NotReady since 2026-11-23T11:58:00Z (2m ago)"},
			next:    []string{"checks what booted", "still NotReady at 2026-11-23T12:13:00Z"},
		},
	}, {
		name: "applying",
		node: workerNode("w1", oldConfig, newConfig, a, "Working"),
		want: want{summary: []string{"updating to rendered-worker-new in mcp/worker: applying"}, next: []string{"one transaction"}},
	}, {
		name: "drained, about to apply",
		node: workerNode("w1", oldConfig, newConfig, a, "Working", protocol.DesiredDrainAnnotation, "drain-"+newConfig, protocol.LastAppliedDrainAnnotation, "drain-"+newConfig),
		want: want{summary: []string{": cordoned"}, doing: []string{"drained and cordoned"}},
	}, {
		name: "queued: the agent has not started",
		node: workerNode("w1", oldConfig, newConfig),
		want: want{summary: []string{"queued for rendered-worker-new"}, youCan: []string{"journalctl -u mco-daemon"}},
	}, {
		name: "queued long ago: stalled",
		node: workerNode("w1", oldConfig, newConfig, rolloutv1.TargetedAnnotation, protocol.Targeted(newConfig, now.Add(-time.Hour))),
		want: want{summary: []string{"queued for rendered-worker-new"},
			why:    []string{"stalled: it was given rendered-worker-new at 2026-11-23T11:00:00Z (1h0m ago, past the 30m0s stall threshold)", "mcp/worker names such a node in its UpdateStalled condition"},
			youCan: []string{"--field-selector spec.nodeName=w1"}},
	}, {
		name: "uncordoning after the update",
		node: workerNode("w1", newConfig, newConfig, protocol.DesiredDrainAnnotation, "uncordon-"+newConfig, protocol.LastAppliedDrainAnnotation, "drain-"+newConfig),
		want: want{summary: []string{"uncordoning"}},
	}, {
		name: "done",
		node: workerNode("w1", newConfig, newConfig),
		want: want{summary: []string{"Done: runs rendered-worker-new, the target of mcp/worker"}, next: []string{"nothing until the pool gets a new target"}},
	}, {
		// The agent seeds Working at first boot (and after a stuck journal clears) until it
		// has verified the node: not Done, whatever current and desired say.
		name: "on its desired config but Working is not Done",
		node: workerNode("w1", newConfig, newConfig, a, "Working"),
		want: want{summary: []string{"verifying rendered-worker-new in mcp/worker"}, next: []string{"counts the node unavailable"}},
	}, {
		name: "NotReady but not updating is not mco's doing",
		node: notReady(workerNode("w1", newConfig, newConfig), now.Add(-time.Hour)),
		want: want{summary: []string{"Done"}, why: []string{"not because of mco"}, youCan: []string{"kubectl describe node w1"}},
	}, {
		name: "drift found before an update holds the update",
		node: workerNode("w1", oldConfig, newConfig, a, "Degraded", protocol.ReasonAnnotation, driftReason),
		events: []corev1.Event{
			event("Node", "w1", corev1.EventTypeWarning, "PreflightConfigDriftCheckFailed", driftReason, time.Minute),
		},
		want: want{
			summary: []string{"Degraded (PreflightConfigDriftCheckFailed)"},
			why:     []string{"/etc/chrony.conf on the node"},
			next:    []string{"the update to rendered-worker-new waits (nothing was drained or written)"},
		},
	}, {
		name: "paused pool says what unpausing would do",
		node: workerNode("w1", oldConfig, oldConfig),
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Spec.Paused = true
			p.Status.Conditions = append(p.Status.Conditions, condition(poolcondition.PendingUpdate, "DrainAndReboot", "unpausing reboots 1 nodes: kernel argument audit=1"))
		},
		want: want{
			summary: []string{"waiting: mcp/worker holds its update to rendered-worker-new"},
			why:     []string{"mcp/worker is paused", "PendingUpdate (DrainAndReboot): unpausing reboots 1 nodes: kernel argument audit=1"},
			next:    []string{"nothing until the pool is unpaused; then unpausing reboots 1 nodes"},
			youCan:  []string{`kubectl patch mcp worker --type merge -p '{"spec":{"paused":false}}'`},
		},
	}, {
		name:   "soaking policy says when it goes on",
		node:   workerNode("w2", oldConfig, oldConfig),
		others: []corev1.Node{workerNode("w1", newConfig, newConfig)},
		policies: []rolloutv1.MachineConfigPoolRollout{policy("workers",
			rolloutv1.MachineConfigPoolRolloutSpec{Soak: metav1.Duration{Duration: time.Hour}},
			rolloutv1.PoolRolloutStatus{Name: "worker", Target: newConfig, Phase: rolloutv1.PhaseSoaking, Reason: "batch 1 done: soaking (50m left)",
				Batch: 1, BatchFinishedAt: ptr(metav1.NewTime(now.Add(-10 * time.Minute))), NodesDone: 1, NodesRemaining: 1})},
		want: want{
			summary: []string{"holds its update"},
			why:     []string{"paced by mcprollout/workers: Soaking (batch 1 done: soaking (50m left))"},
			next:    []string{"the next batch starts at", "(in 50m) when the soak ends"},
			youCan:  []string{"`mco rollout resume mcp/worker`"},
		},
	}, {
		name:   "canary waiting for approval",
		node:   workerNode("w2", oldConfig, oldConfig),
		others: []corev1.Node{workerNode("w1", newConfig, newConfig)},
		policies: []rolloutv1.MachineConfigPoolRollout{policy("workers",
			rolloutv1.MachineConfigPoolRolloutSpec{Canary: &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}},
			rolloutv1.PoolRolloutStatus{Name: "worker", Target: newConfig, Phase: rolloutv1.PhaseCanary, Reason: "canary done: waiting for `mco rollout resume`",
				Batch: 1, BatchFinishedAt: ptr(metav1.NewTime(now.Add(-time.Minute))), NodesDone: 1, NodesRemaining: 1})},
		want: want{
			why:    []string{"paced by mcprollout/workers: Canary"},
			next:   []string{"the next batch starts on `mco rollout resume mcp/worker`"},
			youCan: []string{"mco rollout resume mcp/worker"},
		},
	}, {
		name: "maintenance window",
		node: workerNode("w1", oldConfig, oldConfig),
		policies: []rolloutv1.MachineConfigPoolRollout{policy("workers",
			rolloutv1.MachineConfigPoolRolloutSpec{MaintenanceWindows: []rolloutv1.MaintenanceWindow{{Start: "15:00", Duration: &metav1.Duration{Duration: time.Hour}}}},
			rolloutv1.PoolRolloutStatus{Name: "worker", Target: newConfig, Phase: rolloutv1.PhaseWaitingForWindow, Reason: "waiting for window",
				NextWindowStart: ptr(metav1.NewTime(now.Add(3 * time.Hour))), NodesRemaining: 1})},
		want: want{
			why:    []string{"paced by mcprollout/workers: WaitingForWindow"},
			next:   []string{"(in 3h0m) when the maintenance window opens"},
			youCan: []string{"maintenanceWindows"},
		},
	}, {
		name:   "maxUnavailable taken by an updating node",
		node:   workerNode("w2", oldConfig, oldConfig),
		others: []corev1.Node{workerNode("w1", oldConfig, newConfig, a, "Working")},
		want: want{
			why:    []string{"maxUnavailable is 1 and 1 node is unavailable (w1)"},
			next:   []string{"1 waiting node starts as those become Ready and Done"},
			youCan: []string{"`mco explain node/w1`", "spec.maxUnavailable"},
		},
	}, {
		name: "joining: no currentConfig yet",
		node: func() corev1.Node { n := workerNode("w1", "", ""); return n }(),
		want: want{summary: []string{"joining mcp/worker"}},
	}, {
		name: "no pool selects it",
		node: func() corev1.Node { n := workerNode("w1", oldConfig, oldConfig); n.Labels = nil; return n }(),
		want: want{summary: []string{"not managed: no pool selects it"}, youCan: []string{"kubectl label node w1 node-role.kubernetes.io/worker="},
			why: []string{"mcp/worker selects node-role.kubernetes.io/worker=: the node has no label node-role.kubernetes.io/worker"}},
	}, {
		name: "a kubeadm control-plane node no pool selects",
		node: func() corev1.Node {
			n := workerNode("cp1", "", "")
			n.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/os": "linux"}
			return n
		}(),
		want: want{summary: []string{"not managed: no pool selects it"}, youCan: []string{"kubectl label node cp1 node-role.kubernetes.io/master="},
			why: []string{"mcp/worker selects node-role.kubernetes.io/worker=: the node has no label node-role.kubernetes.io/worker"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := workerPool(t, newConfig)
			if tc.pool != nil {
				tc.pool(&pool)
			}
			c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: append([]corev1.Node{tc.node}, tc.others...), Events: tc.events, Policies: tc.policies}
			x, err := Node(c, tc.node.Name)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
}

// Whether a node is stalled is read off the node, against the controller's threshold: 10 minutes
// after its target it is not, unless the controller's --update-stall-threshold is shorter.
func TestNodeStalledByItsOwnTarget(t *testing.T) {
	pool := workerPool(t, newConfig)
	n := workerNode("w1", oldConfig, newConfig, rolloutv1.TargetedAnnotation, protocol.Targeted(newConfig, now.Add(-10*time.Minute)))
	for threshold, want := range map[time.Duration]bool{0: false, 5 * time.Minute: true} {
		x, err := Node(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: []corev1.Node{n}, StallThreshold: threshold}, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(x.Why, "\n"), "UpdateStalled"); got != want {
			t.Errorf("threshold %s: explained as stalled %v, want %v: %q", threshold, got, want, x.Why)
		}
	}
}

func TestNodeNotFound(t *testing.T) {
	_, err := Node(Cluster{Now: now}, "nope")
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != `node "nope" not found` {
		t.Fatalf("got %v, want a NotFoundError naming the node", err)
	}
	if _, err := Pool(Cluster{Now: now}, "nope"); !errors.As(err, &nf) {
		t.Fatalf("pool: got %v", err)
	}
}

func TestPool(t *testing.T) {
	a := protocol.StateAnnotation
	for _, tc := range []struct {
		name     string
		pool     func(*mcfgv1.MachineConfigPool)
		nodes    []corev1.Node
		events   []corev1.Event
		policies []rolloutv1.MachineConfigPoolRollout
		want     want
	}{{
		name: "render degraded names the MachineConfig",
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Spec.Configuration.Name = oldConfig
			msg := `MachineConfig 99-worker-bad: spec.config.storage.files[0].path (line 3 col 9): must be absolute`
			p.Status.Conditions = append(p.Status.Conditions, condition(mcfgv1.MachineConfigPoolRenderDegraded, "RenderFailed", msg), condition(mcfgv1.MachineConfigPoolDegraded, "RenderFailed", msg))
		},
		nodes: []corev1.Node{workerNode("w1", oldConfig, oldConfig)},
		want: want{
			summary:  []string{"Degraded: 1 of 1 nodes run rendered-worker-old; held: mcp/worker's MachineConfigs do not render (RenderDegraded)"},
			why:      []string{"MachineConfig 99-worker-bad: spec.config.storage.files[0].path"},
			next:     []string{"keeps its last target rendered-worker-old"},
			youCan:   []string{"mco validate"},
			evidence: []string{"mcp/worker condition RenderDegraded=True reason RenderFailed"},
		},
	}, {
		name: "a stalled node holds the pool",
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Status.Conditions = append(p.Status.Conditions, condition(poolcondition.UpdateStalled, "NoProgress",
				"Node w1 was given "+newConfig+" at 2026-11-23T11:00:00Z and has not finished moving to it (its agent reports Done on "+oldConfig+": it has not started the update; is its agent running?)"))
		},
		nodes: []corev1.Node{workerNode("w1", oldConfig, newConfig, rolloutv1.TargetedAnnotation, protocol.Targeted(newConfig, now.Add(-time.Hour))), workerNode("w2", oldConfig, oldConfig)},
		want: want{
			why:    []string{"a node stopped moving to its target with nothing else reported (UpdateStalled): Node w1 was given rendered-worker-new", "is its agent running?"},
			youCan: []string{"`mco explain node/NAME`"},
		},
	}, {
		name: "two policies select the pool, and degraded nodes",
		nodes: []corev1.Node{
			workerNode("w1", oldConfig, oldConfig, a, "Degraded", protocol.ReasonAnnotation, driftReason),
			workerNode("w2", oldConfig, newConfig, a, "Degraded", protocol.ReasonAnnotation, "config rendered-worker-new is written and needs a reboot, but 3 reboots asked for over 15m0s never happened"),
			workerNode("w3", oldConfig, oldConfig),
		},
		events: []corev1.Event{
			event("Node", "w2", corev1.EventTypeWarning, "RebootFailed", "reboots never happened", time.Minute),
			event("MachineConfigPool", "worker", corev1.EventTypeNormal, "SetDesiredConfig", "Targeted w2 to MachineConfig rendered-worker-new", 30*time.Minute),
		},
		policies: []rolloutv1.MachineConfigPoolRollout{
			policy("a", rolloutv1.MachineConfigPoolRolloutSpec{}, rolloutv1.PoolRolloutStatus{}),
			policy("b", rolloutv1.MachineConfigPoolRolloutSpec{}, rolloutv1.PoolRolloutStatus{}),
		},
		want: want{
			summary:  []string{"Degraded: 0 of 3 nodes run rendered-worker-new", "held: two policies select the pool"},
			doing:    []string{"degraded w1, w2; waiting w3"},
			why:      []string{"node w1 is Degraded (ConfigDriftDetected): /etc/chrony.conf", "node w2 is Degraded (RebootFailed)", "two policies select the pool", "mcprollout/a and mcprollout/b"},
			next:     []string{"exactly one MachineConfigPoolRollout"},
			youCan:   []string{"`mco explain node/w1`", "`mco explain node/w2`", "poolSelector"},
			evidence: []string{"event Normal SetDesiredConfig on machineconfigpool/worker 30m ago"},
		},
	}, {
		name:  "updated",
		nodes: []corev1.Node{workerNode("w1", newConfig, newConfig), workerNode("w2", newConfig, newConfig)},
		want: want{
			summary: []string{"Updated: 2 of 2 nodes run rendered-worker-new"},
			doing:   []string{"nothing: every node runs rendered-worker-new"},
			next:    []string{"nothing until the pool gets a new target"},
		},
	}, {
		name: "held by a rollback: which render failed, why, how to move on",
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Spec.Configuration.Name = oldConfig
			rb := rolloutv1.Rollback{From: newConfig, To: oldConfig, By: "spec.onFailure of mcprollout/workers",
				Reason: "node w1 failed to update to rendered-worker-new: NodeBootFailed: kubelet not healthy", At: "2026-11-23T11:50:00Z"}
			p.Annotations = map[string]string{rolloutv1.RollbackAnnotation: rollback.Encode(rb), rolloutv1.PreviousConfigurationAnnotation: "rendered-worker-older"}
			p.Status.Conditions = append(p.Status.Conditions, condition(poolcondition.RolledBack, rollback.ReasonHeld, rollback.HeldMessage("worker", &rb)))
		},
		nodes: []corev1.Node{workerNode("w1", oldConfig, oldConfig), workerNode("w2", oldConfig, oldConfig)},
		want: want{
			summary:  []string{"Updated: 2 of 2 nodes run rendered-worker-old; rolled back from rendered-worker-new by spec.onFailure of mcprollout/workers"},
			why:      []string{"rolled back (RolledBack): held on rendered-worker-old: rendered-worker-new was rolled back by spec.onFailure of mcprollout/workers: node w1 failed to update to rendered-worker-new: NodeBootFailed"},
			next:     []string{"the pool stays on rendered-worker-old until its MachineConfigs change (a new render) or `mco rollout resume mcp/worker`"},
			youCan:   []string{"fix or delete the MachineConfig that broke rendered-worker-new", "`mco rollout resume mcp/worker`", "`mco plan --pool worker`"},
			evidence: []string{"mcp/worker condition RolledBack=True reason RolledBack", "mcp/worker annotation rollout.mco.dev/rollback=", "annotation rollout.mco.dev/previous-configuration=rendered-worker-older"},
		},
	}, {
		name: "paused, with what unpausing does",
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Spec.Paused = true
			p.Status.Conditions = append(p.Status.Conditions, condition(poolcondition.PendingUpdate, "DrainAndReboot", "unpausing reboots 2 nodes: kernel argument audit=1"))
		},
		nodes: []corev1.Node{workerNode("w1", oldConfig, oldConfig), workerNode("w2", oldConfig, oldConfig)},
		want: want{
			summary: []string{"Paused: 0 of 2 nodes run rendered-worker-new; held: mcp/worker is paused"},
			doing:   []string{"waiting w1, w2"},
			next:    []string{"unpausing reboots 2 nodes"},
		},
	}, {
		name: "updating, paced by a progressing policy",
		nodes: []corev1.Node{
			workerNode("w1", newConfig, newConfig),
			workerNode("w2", oldConfig, newConfig, a, "Working", protocol.DesiredDrainAnnotation, "drain-"+newConfig),
			workerNode("w3", oldConfig, oldConfig),
		},
		pool: func(p *mcfgv1.MachineConfigPool) { p.Spec.MaxUnavailable = ptr(intstr.FromInt32(2)) },
		policies: []rolloutv1.MachineConfigPoolRollout{policy("workers", rolloutv1.MachineConfigPoolRolloutSpec{},
			rolloutv1.PoolRolloutStatus{Name: "worker", Target: newConfig, Phase: rolloutv1.PhaseProgressing, Batch: 2, NodesDone: 1, NodesRemaining: 2})},
		want: want{
			summary:  []string{"Updating: 1 of 3 nodes run rendered-worker-new"},
			doing:    []string{"draining w2; waiting w3"},
			why:      []string{"paced by mcprollout/workers: Progressing"},
			next:     []string{"starts waiting nodes"},
			evidence: []string{"mcprollout/workers pool worker: phase Progressing, batch 2"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := workerPool(t, newConfig)
			if tc.pool != nil {
				tc.pool(&pool)
			}
			x, err := Pool(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: tc.nodes, Events: tc.events, Policies: tc.policies}, "worker")
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
}

// A pool of a thousand failing nodes still explains itself in a screen.
func TestBounded(t *testing.T) {
	pool := workerPool(t, newConfig)
	var nodes []corev1.Node
	var events []corev1.Event
	for i := range 1000 {
		name := fmt.Sprintf("w%04d", i)
		nodes = append(nodes, workerNode(name, oldConfig, newConfig, protocol.StateAnnotation, "Degraded", protocol.ReasonAnnotation, strings.Repeat("x", 2000)))
		events = append(events, event("MachineConfigPool", "worker", corev1.EventTypeWarning, "NodeUnresponsive", "Node "+name+" ...", time.Duration(i)*time.Second))
	}
	x, err := Pool(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: nodes, Events: events}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Write(&b, x); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(b.String(), "\n"); lines > 40 {
		t.Errorf("%d lines for 1000 degraded nodes, want at most 40:\n%s", lines, b.String())
	}
	if len(b.String()) > 8000 {
		t.Errorf("%d bytes, want at most 8000", len(b.String()))
	}
	for _, s := range []string{"and 995 more degraded nodes", "degraded w0000, w0001, w0002, w0003, w0004 and 995 more", "and 994 older events"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("output does not say %q:\n%s", s, b.String())
		}
	}
}

func ptr[T any](v T) *T { return &v }
