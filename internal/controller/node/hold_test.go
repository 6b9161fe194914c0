package node

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestHoldAndPriority: with one node at a time, the node with the highest update priority is
// targeted first, the held node never; the pool then waits for the held node (NodesHeld, not
// Updated, not Degraded) until the hold is released, and the release alone wakes it.
func TestHoldAndPriority(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role, oldCfg, newCfg = "hold", "rendered-hold-old", "rendered-hold-new"
	one := intstr.FromInt32(1)
	newPool(t, ctx, role, role, oldCfg, &one)
	nodes := createNodes(t, ctx, role, 3, oldCfg, map[string]string{roleLabel(role): "", nodesim.SimulatedLabel: ""})
	waitPool(t, ctx, role, "nodes on the old config", 30*time.Second, updatedTo(oldCfg, 3))
	annotateNode(t, ctx, nodes[0], map[string]string{rolloutv1.HoldAnnotation: "true"})
	annotateNode(t, ctx, nodes[2], map[string]string{rolloutv1.UpdatePriorityAnnotation: "10"})
	order := watchTargeted(t, ctx, role, newCfg)

	setTarget(t, ctx, role, newCfg)
	p := waitPool(t, ctx, role, "waiting for the held node", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		return p.Status.UpdatedMachineCount == 2 && poolcondition.IsTrue(&p.Status, poolcondition.NodesHeld)
	})
	if got := order(); !slices.Equal(got, []string{nodes[2], nodes[1]}) {
		t.Errorf("targeted in order %v, want %v (priority 10 first, the held node never)", got, []string{nodes[2], nodes[1]})
	}
	held := poolcondition.Get(&p.Status, poolcondition.NodesHeld)
	if want := "Waiting for held nodes: hold-00 (on rendered-hold-old). Release them with `mco hold --undo hold-00`"; held.Message != want {
		t.Errorf("NodesHeld message %q, want %q", held.Message, want)
	}
	for _, c := range []mcfgv1.MachineConfigPoolConditionType{mcfgv1.MachineConfigPoolUpdated, mcfgv1.MachineConfigPoolUpdating, mcfgv1.MachineConfigPoolDegraded} {
		if poolcondition.IsTrue(&p.Status, c) {
			t.Errorf("%s is True while only a held node is behind: %+v", c, poolcondition.Get(&p.Status, c))
		}
	}
	time.Sleep(500 * time.Millisecond)
	if d := getNode(t, ctx, nodes[0]).Annotations[protocol.DesiredConfigAnnotation]; d != oldCfg {
		t.Fatalf("the held node was targeted at %s", d)
	}
	if v := testutil.ToFloat64(poolHeld.WithLabelValues(role)); v != 1 {
		t.Errorf("mco_pool_held = %v while only a held node is behind, want 1 (a stall alert would fire)", v)
	}

	annotateNode(t, ctx, nodes[0], map[string]string{rolloutv1.HoldAnnotation: ""})
	p = waitPool(t, ctx, role, "Updated once released", 30*time.Second, updatedTo(newCfg, 3))
	if c := poolcondition.Get(&p.Status, poolcondition.NodesHeld); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("NodesHeld after the release: %+v, want False", c)
	}
	if v := testutil.ToFloat64(poolHeld.WithLabelValues(role)); v != 0 {
		t.Errorf("mco_pool_held = %v once Updated, want 0", v)
	}
	if got := order(); !slices.Equal(got, []string{nodes[2], nodes[1], nodes[0]}) {
		t.Errorf("targeted in order %v", got)
	}
}

// watchTargeted records, through an API watch of its own, the order in which the role's nodes
// are first pointed at cfg; every event of a resource arrives, in order, so none is missed.
func watchTargeted(t *testing.T, ctx context.Context, role, cfg string) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.NodeList{}, client.HasLabels{roleLabel(role)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || n.Annotations[protocol.DesiredConfigAnnotation] != cfg {
				continue
			}
			mu.Lock()
			if !slices.Contains(order, n.Name) {
				order = append(order, n.Name)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order)
	}
}
