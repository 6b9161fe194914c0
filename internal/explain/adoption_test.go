package explain

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// kubeadmNode is a Ready worker mco did not boot, with the adoption annotations given.
func kubeadmNode(name string, more ...string) corev1.Node {
	n := workerNode(name, "", "", more...)
	delete(n.Annotations, protocol.CurrentConfigAnnotation)
	delete(n.Annotations, protocol.DesiredConfigAnnotation)
	delete(n.Annotations, protocol.StateAnnotation)
	return n
}

func encodedPlan(t *testing.T, p adoption.Plan) string {
	t.Helper()
	s, err := adoption.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNodeAdoption(t *testing.T) {
	chrony := adoption.Plan{Target: newConfig, Actions: "Reboot", Drain: true, Reboot: true,
		Files: []adoption.FileChange{
			{Path: "/etc/chrony.conf", Change: adoption.ChangeContent, Diff: "--- host/etc/chrony.conf\n+++ config/etc/chrony.conf\n@@ -1 +1 @@\n-pool 2.debian.pool.ntp.org iburst\n+server 10.0.0.1 iburst"},
			{Path: "/etc/kubernetes/secret", Change: adoption.ChangeCreate, Note: "contents not shown: the file is not world-readable"},
		},
		Units: []adoption.UnitChange{{Name: "chronyd.service", Change: "enable"}}}
	pending := func(p adoption.Plan, more ...string) corev1.Node {
		return kubeadmNode("k1", append([]string{protocol.AdoptionTargetAnnotation, newConfig, protocol.AdoptionAnnotation, protocol.AdoptionPending,
			protocol.AdoptionPlanAnnotation, encodedPlan(t, p)}, more...)...)
	}
	refused := chrony
	refused.Refused = []string{"osImageURL: this host cannot switch OS images"}
	for _, tc := range []struct {
		name   string
		node   corev1.Node
		pool   func(*mcfgv1.MachineConfigPool)
		others []corev1.Node
		want   want
	}{{
		name: "no offer yet",
		node: kubeadmNode("k1"),
		want: want{summary: []string{"joining mcp/worker: the agent has not reported yet"},
			next: []string{"offers it rendered-worker-new (annotation adoption-target)"}},
	}, {
		name: "offered, the agent has not compared",
		node: kubeadmNode("k1", protocol.AdoptionTargetAnnotation, newConfig),
		want: want{summary: []string{"offered rendered-worker-new in mcp/worker: its agent has not compared the host yet"},
			next:     []string{"adopted as it is (no drain, reboot or change)"},
			evidence: []string{"annotation adoption-target=rendered-worker-new"}},
	}, {
		name: "pending: what adopting writes, with diffs, and how to approve",
		node: pending(chrony),
		want: want{
			summary: []string{"waiting for adoption into rendered-worker-new in mcp/worker: adopting into rendered-worker-new would write 2 files (/etc/chrony.conf, /etc/kubernetes/secret), change 1 unit (chronyd.service), drain, then reboot"},
			doing:   []string{"waits for your approval"},
			why: []string{"writes /etc/chrony.conf (content):\n      --- host/etc/chrony.conf", "\n      +server 10.0.0.1 iburst",
				"writes /etc/kubernetes/secret (create): contents not shown: the file is not world-readable", "unit chronyd.service: enable"},
			next:     []string{"within the pool's maxUnavailable", "(drain, write, reboot)", "`mco daemon revert`"},
			youCan:   []string{"`mco adopt k1`", "`mco adopt --pool worker`", "`mco plan --pool worker` shows each file's whole diff"},
			evidence: []string{"annotation adoption=Pending"},
		},
	}, {
		name: "approved on the pool, waiting for room",
		node: pending(chrony),
		pool: func(p *mcfgv1.MachineConfigPool) {
			p.Annotations = map[string]string{protocol.AdoptAnnotation: protocol.AdoptApproved}
		},
		others: []corev1.Node{workerNode("w1", oldConfig, newConfig, protocol.StateAnnotation, "Working")},
		want: want{summary: []string{"adoption into rendered-worker-new approved, waiting for room in mcp/worker"},
			why: []string{"maxUnavailable bounds adoptions"}},
	}, {
		name: "refused",
		node: pending(refused, protocol.AdoptAnnotation, protocol.AdoptApproved),
		want: want{summary: []string{"cannot be adopted into rendered-worker-new in mcp/worker"},
			why: []string{"osImageURL: this host cannot switch OS images"}, next: []string{"approving does not help"}},
	}, {
		name: "a plan for the pool's previous target",
		node: pending(adoption.Plan{Target: oldConfig, Actions: "Reboot"}),
		want: want{summary: []string{"offered rendered-worker-new in mcp/worker"}, doing: []string{"its published plan is for another config"}},
	}, {
		name: "in no pool: which label each pool wants, and that a pool would offer it its config",
		node: func() corev1.Node { n := kubeadmNode("k1"); n.Labels = nil; return n }(),
		want: want{summary: []string{"not managed: no pool selects it"},
			why:  []string{"mcp/worker selects node-role.kubernetes.io/worker=: the node has no label node-role.kubernetes.io/worker"},
			next: []string{"that pool then offers the node its config"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := workerPool(t, newConfig)
			if tc.pool != nil {
				tc.pool(&pool)
			}
			c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: append([]corev1.Node{tc.node}, tc.others...)}
			x, err := Node(c, tc.node.Name)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
}

func TestPoolAwaitingAdoption(t *testing.T) {
	pool := workerPool(t, newConfig)
	pool.Status.Conditions = append(pool.Status.Conditions, condition(poolcondition.NodesAwaitingAdoption, "ApprovalRequired",
		"Node k1: adopting into rendered-worker-new would write 1 file (/etc/chrony.conf), drain, then reboot"))
	x, err := Pool(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: []corev1.Node{workerNode("w1", newConfig, newConfig)}}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	want{why: []string{"wait for adoption (NodesAwaitingAdoption, not counted in the pool): Node k1: adopting"},
		youCan: []string{"`mco adopt --pool worker`"}}.check(t, x)
}
