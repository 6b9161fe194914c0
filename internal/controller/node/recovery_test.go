package node

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestFailedCordonedNodeRecoversWithoutHandEdits is issue 13's scenario at the controller: a
// node fails after mco drained it, so it stays cordoned; taking the bad config back (the pool
// returns to the old rendered config) or rolling a fixed one must reach that node within
// maxUnavailable 1 and return the pool to Updated, with nobody editing annotations.
func TestFailedCordonedNodeRecoversWithoutHandEdits(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "recover"
	oldCfg, badCfg, fixedCfg := "rendered-recover-old", "rendered-recover-bad", "rendered-recover-fixed"
	newPool(t, ctx, role, role, oldCfg, nil)
	nodes := createNodes(t, ctx, role, 3, oldCfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo(oldCfg, 3))
	watcher := watchUnavailable(t, ctx, role)
	failed := nodes[0]

	failAfterDrain := func(t *testing.T, target string) {
		t.Helper()
		agent.Fail(failed, "applying "+target+" (rolled back): /etc/x/file: /etc/x is a symlink")
		setTarget(t, ctx, role, target)
		p := waitPool(t, ctx, role, "the failure named on the pool", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
			c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded)
			return c != nil && c.Status == corev1.ConditionTrue &&
				strings.HasPrefix(c.Message, "Node "+failed+" failed to update from "+oldCfg+" to "+target+": \"applying "+target)
		})
		if d := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolDegraded); d == nil || !strings.Contains(d.Message, "To recover, fix or delete the MachineConfig") {
			t.Errorf("Degraded does not say what to do: %+v", d)
		}
		if n := getNode(t, ctx, failed); !n.Spec.Unschedulable {
			t.Fatalf("%s failed after its drain but is not cordoned: the scenario needs it cordoned", failed)
		}
	}

	t.Run("deleting the bad MachineConfig returns the pool to its old config", func(t *testing.T) {
		failAfterDrain(t, badCfg)
		setTarget(t, ctx, role, oldCfg) // what the render controller does once the bad MC is gone
		p := waitPool(t, ctx, role, "Updated on the old config", 30*time.Second, updatedTo(oldCfg, 3))
		if poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
			t.Errorf("still Degraded: %+v", p.Status.Conditions)
		}
		wantSettled(t, ctx, nodes, oldCfg)
	})

	t.Run("a fixed config reaches the cordoned failed node first", func(t *testing.T) {
		failAfterDrain(t, badCfg+"-2")
		agent.Heal(failed)
		setTarget(t, ctx, role, fixedCfg)
		waitPool(t, ctx, role, "Updated on the fixed config", 30*time.Second, updatedTo(fixedCfg, 3))
		wantSettled(t, ctx, nodes, fixedCfg)
	})
	if most, _ := watcher.max(); most > 1 {
		t.Errorf("%d nodes were unavailable at once; maxUnavailable is 1", most)
	}
}

func wantSettled(t *testing.T, ctx context.Context, nodes []string, cfg string) {
	t.Helper()
	for _, name := range nodes {
		n := getNode(t, ctx, name)
		a := n.Annotations
		if a[protocol.CurrentConfigAnnotation] != cfg || a[protocol.DesiredConfigAnnotation] != cfg ||
			a[protocol.StateAnnotation] != string(protocol.NodeDone) || n.Spec.Unschedulable {
			t.Errorf("%s did not end Done and uncordoned on %s: %v unschedulable=%v", name, cfg, a, n.Spec.Unschedulable)
		}
	}
}

// TestUnresponsiveNodeIsReportedAndHaltsThePool: a node that goes NotReady in the middle of
// its update and stays so past the threshold is named on the pool and in an event, and no
// other node is started, though maxUnavailable would allow it.
func TestUnresponsiveNodeIsReportedAndHaltsThePool(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "lost"
	oldCfg, newCfg := "rendered-lost-old", "rendered-lost-new"
	three := intstr.FromInt32(3)
	newPool(t, ctx, role, role, oldCfg, &three)
	nodes := createNodes(t, ctx, role, 4, oldCfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo(oldCfg, 4))

	// The node goes down mid-update: NotReady first, so the controller never sees it as a
	// healthy node on the wrong config; then it is left as an agent leaves a node it reboots.
	setReady(t, ctx, nodes[0], false)
	patchNode(t, ctx, nodes[0], func(n *corev1.Node) {
		delete(n.Labels, nodesim.SimulatedLabel) // the agent is down with it
		n.Annotations[protocol.DesiredConfigAnnotation] = newCfg
		n.Annotations[protocol.StateAnnotation] = string(protocol.NodeWorking)
		n.Annotations[protocol.PostConfigActionAnnotation] = protocol.PostConfigActionRebooting
	})
	p := waitPool(t, ctx, role, "NodeUnresponsive", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, poolcondition.NodeUnresponsive)
	})
	// Below the threshold it would only hold one of three slots; past it, nothing starts.
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = newCfg })
	c := poolcondition.Get(&p.Status, poolcondition.NodeUnresponsive)
	for _, want := range []string{"Node " + nodes[0], "while updating to " + newCfg, "no further nodes"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("NodeUnresponsive message %q lacks %q", c.Message, want)
		}
	}
	if !poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Error("pool not Degraded")
	}
	waitEvent(t, ctx, "pool", role, ReasonNodeUnresponsive, nodes[0])
	time.Sleep(time.Second) // time enough for a controller that starts nodes anyway
	for _, name := range nodes[1:] {
		if got := getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation]; got != oldCfg {
			t.Errorf("%s was started (%s) while %s was unresponsive", name, got, nodes[0])
		}
	}

	// It comes back and finishes: the pool goes on by itself.
	patchNode(t, ctx, nodes[0], func(n *corev1.Node) {
		n.Labels[nodesim.SimulatedLabel] = ""
		delete(n.Annotations, protocol.PostConfigActionAnnotation)
	})
	setReady(t, ctx, nodes[0], true)
	p = waitPool(t, ctx, role, "Updated after the node returned", 30*time.Second, updatedTo(newCfg, 4))
	if poolcondition.IsTrue(&p.Status, poolcondition.NodeUnresponsive) || poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Errorf("conditions after recovery: %+v", p.Status.Conditions)
	}
}

func patchNode(t *testing.T, ctx context.Context, name string, edit func(*corev1.Node)) {
	t.Helper()
	n := getNode(t, ctx, name)
	before := n.DeepCopy()
	edit(n)
	if err := k8sClient.Patch(ctx, n, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// setReady retries on conflicts: the controllers write the same node meanwhile.
func setReady(t *testing.T, ctx context.Context, name string, ready bool) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return nodesim.SetReady(ctx, k8sClient, getNode(t, ctx, name), ready)
	})
	if err != nil {
		t.Fatal(err)
	}
}
