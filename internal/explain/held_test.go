package explain

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

func TestHeldNode(t *testing.T) {
	h := rolloutv1.HoldAnnotation
	for _, tc := range []struct {
		name string
		node corev1.Node
		want want
	}{{
		name: "held behind the target",
		node: workerNode("w1", oldConfig, oldConfig, h, "true"),
		want: want{
			summary: []string{"held: runs rendered-worker-old, mcp/worker targets rendered-worker-new"},
			doing:   []string{"never gives it rendered-worker-new"},
			why:     []string{"`mco hold w1`", "neither Updated nor Degraded", "NodesHeld"},
			next:    []string{"nothing until the hold is released"},
			youCan:  []string{"`mco hold --undo w1`", "kubectl annotate node w1 rollout.mco.dev/hold-"},
		},
	}, {
		name: "held while updating: the update finishes",
		node: workerNode("w1", oldConfig, newConfig, h, "true", protocol.StateAnnotation, "Working"),
		want: want{
			summary: []string{"updating to rendered-worker-new in mcp/worker"},
			why:     []string{"the update in progress finishes, and no further update starts on it"},
			youCan:  []string{"`mco hold --undo w1`"},
		},
	}, {
		name: "held on the target",
		node: workerNode("w1", newConfig, newConfig, h, "true"),
		want: want{
			summary: []string{"Done: runs rendered-worker-new"},
			why:     []string{"no update starts on it, now or for the pool's next target"},
			youCan:  []string{"`mco hold --undo w1`"},
		},
	}, {
		name: "a hold that is not \"true\" holds nothing",
		node: workerNode("w1", oldConfig, oldConfig, h, "yes"),
		want: want{summary: []string{"waiting: runs rendered-worker-old"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{workerPool(t, newConfig)}, Nodes: []corev1.Node{tc.node}}
			x, err := Node(c, "w1")
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
}

func TestHeldPool(t *testing.T) {
	h := rolloutv1.HoldAnnotation
	for _, tc := range []struct {
		name  string
		nodes []corev1.Node
		want  want
	}{{
		name:  "only held nodes behind",
		nodes: []corev1.Node{workerNode("w1", newConfig, newConfig), workerNode("w2", oldConfig, oldConfig, h, "true"), workerNode("w3", oldConfig, oldConfig, h, "true")},
		want: want{
			summary: []string{"Waiting for held nodes: 1 of 3 nodes run rendered-worker-new"},
			doing:   []string{"held w2, w3"},
			why:     []string{"2 nodes are held back by an admin (`mco hold`), so mcp/worker is not Updated; it waits for w2, w3"},
			next:    []string{"nothing until the held nodes are released"},
			youCan:  []string{"`mco hold --undo w2 w3`"},
		},
	}, {
		name:  "held beside an update",
		nodes: []corev1.Node{workerNode("w1", oldConfig, newConfig, protocol.StateAnnotation, "Working"), workerNode("w2", oldConfig, oldConfig, h, "true")},
		want: want{
			summary: []string{"Updating: 0 of 2 nodes run rendered-worker-new"},
			doing:   []string{"applying w1; held w2"},
			why:     []string{"1 node is held back"},
		},
	}, {
		name: "a held node is not one of the nodes waiting for capacity",
		nodes: []corev1.Node{workerNode("w1", oldConfig, newConfig, protocol.StateAnnotation, "Working"), workerNode("w2", oldConfig, oldConfig, h, "true"),
			workerNode("w3", oldConfig, oldConfig)},
		want: want{why: []string{"maxUnavailable is 1 and 1 node is unavailable (w1)"}, next: []string{"1 waiting node starts"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := Pool(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{workerPool(t, newConfig)}, Nodes: tc.nodes}, "worker")
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
}
