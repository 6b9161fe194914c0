package node

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestRolloutRespectsMaxUnavailable(t *testing.T) {
	testenv.Integration(t)
	for _, tc := range []struct {
		role  string
		mu    intstr.IntOrString
		limit int
	}{
		{"roll-one", intstr.FromInt32(1), 1},
		{"roll-three", intstr.FromInt32(3), 3},
		{"roll-pct", intstr.FromString("30%"), 3},
	} {
		t.Run(tc.mu.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			oldCfg, newCfg := "rendered-"+tc.role+"-old", "rendered-"+tc.role+"-new"
			newPool(t, ctx, tc.role, tc.role, oldCfg, &tc.mu)
			nodes := createNodes(t, ctx, tc.role, 10, oldCfg, map[string]string{roleLabel(tc.role): ""})
			waitPool(t, ctx, tc.role, "10 nodes updated to the old config", 30*time.Second, updatedTo(oldCfg, 10))

			watcher := watchUnavailable(t, ctx, tc.role)
			setTarget(t, ctx, tc.role, newCfg)
			waitPool(t, ctx, tc.role, "rollout of the new config", 90*time.Second, updatedTo(newCfg, 10))

			for _, name := range nodes {
				n := getNode(t, ctx, name)
				a := n.Annotations
				if a[protocol.CurrentConfigAnnotation] != newCfg || a[protocol.DesiredConfigAnnotation] != newCfg ||
					a[protocol.StateAnnotation] != string(protocol.NodeDone) || n.Spec.Unschedulable || hasUpdateTaint(n) {
					t.Errorf("node %s did not end Done, uncordoned and untainted on %s: %v unschedulable=%v taints=%v", name, newCfg, a, n.Spec.Unschedulable, n.Spec.Taints)
				}
			}
			maxSeen, events := watcher.max()
			if maxSeen > tc.limit {
				t.Errorf("%d nodes were unavailable at once; maxUnavailable allows %d", maxSeen, tc.limit)
			}
			if tc.limit > 1 && maxSeen < 2 {
				t.Errorf("at most %d node unavailable at once: the rollout ran serially despite maxUnavailable %d", maxSeen, tc.limit)
			}
			if events < 10*4 {
				t.Errorf("the watcher saw only %d node events; it cannot have watched the rollout", events)
			}
		})
	}
}

func TestPausedPoolWaitsUntilUnpaused(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "paused"
	newPool(t, ctx, role, role, "rendered-paused-old", nil)
	nodes := createNodes(t, ctx, role, 3, "rendered-paused-old", map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo("rendered-paused-old", 3))

	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) {
		p.Spec.Paused = true
		p.Spec.Configuration.Name = "rendered-paused-new"
	})
	waitPool(t, ctx, role, "paused status", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolUpdating)
		return c != nil && c.Status == corev1.ConditionFalse && c.Message == "Pool is paused; will not update to rendered-paused-new" &&
			!poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	time.Sleep(2 * time.Second) // time enough for a controller that ignores paused to act
	for _, name := range nodes {
		if got := getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation]; got != "rendered-paused-old" {
			t.Fatalf("node %s was targeted at %s while the pool was paused", name, got)
		}
	}
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Spec.Paused = false })
	waitPool(t, ctx, role, "rollout after unpausing", time.Minute, updatedTo("rendered-paused-new", 3))
}

func TestDegradedNodeHaltsRolloutAndIsNamed(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "degrade"
	newPool(t, ctx, role, role, "rendered-degrade-old", nil)
	nodes := createNodes(t, ctx, role, 3, "rendered-degrade-old", map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo("rendered-degrade-old", 3))

	// The first candidate (same creation second, so by name) fails to apply.
	agent.Fail(nodes[0], "failed to write /etc/chrony.conf: read-only file system")
	setTarget(t, ctx, role, "rendered-degrade-new")
	want := `Node degrade-00 failed to update from rendered-degrade-old to rendered-degrade-new: "failed to write /etc/chrony.conf: read-only file system". To recover, `
	p := waitPool(t, ctx, role, "NodeDegraded naming the node, the config and the remedy", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded)
		return c != nil && c.Status == corev1.ConditionTrue && strings.HasPrefix(c.Message, want)
	})
	if !poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) || p.Status.DegradedMachineCount != 1 {
		t.Errorf("Degraded=%v degradedMachineCount=%d", poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolDegraded), p.Status.DegradedMachineCount)
	}
	time.Sleep(2 * time.Second)
	for _, name := range nodes[1:] {
		if got := getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation]; got != "rendered-degrade-old" {
			t.Fatalf("node %s was targeted (%s) while degrade-00 was failing with maxUnavailable 1", name, got)
		}
	}
	agent.Heal(nodes[0])
	p = waitPool(t, ctx, role, "rollout after the node recovered", time.Minute, updatedTo("rendered-degrade-new", 3))
	if poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded) || poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Errorf("still degraded after recovery: %+v", p.Status.Conditions)
	}
}

func TestCustomPoolNodeCountedOnlyThere(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	worker := newPool(t, ctx, protocol.WorkerPool, "worker", "rendered-worker-1", nil)
	_ = worker
	newPool(t, ctx, "infra", "infra", "rendered-infra-1", nil)
	newPool(t, ctx, "gpu", "gpu", "rendered-gpu-1", nil)
	workerLabels := map[string]string{roleLabel("worker"): ""}
	createNodes(t, ctx, "plain-worker", 2, "rendered-worker-1", workerLabels)
	createNodes(t, ctx, "infra-worker", 1, "rendered-infra-1", map[string]string{roleLabel("worker"): "", roleLabel("infra"): ""})
	twoPools := createNodes(t, ctx, "two-pools", 1, "rendered-worker-1", map[string]string{roleLabel("worker"): "", roleLabel("infra"): "", roleLabel("gpu"): ""})
	createNodes(t, ctx, "windows", 1, "rendered-worker-1", map[string]string{roleLabel("worker"): "", "kubernetes.io/os": "windows"})

	waitPool(t, ctx, "worker", "worker counting its two plain nodes", 30*time.Second, updatedTo("rendered-worker-1", 2))
	waitPool(t, ctx, "infra", "infra counting its node", 30*time.Second, updatedTo("rendered-infra-1", 1))
	waitPool(t, ctx, "gpu", "gpu counting nothing", 30*time.Second, updatedTo("rendered-gpu-1", 0))

	// The node in two custom pools is managed by neither and gets a Warning event.
	deadline := time.Now().Add(time.Minute)
	for {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events, client.MatchingFields{"involvedObject.name": twoPools[0]}); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range events.Items {
			found = found || (e.Reason == ReasonMultiplePools && strings.Contains(e.Message, "gpu, infra"))
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event on %s: %+v", ReasonMultiplePools, twoPools[0], events.Items)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// New targets for all three reach only their own nodes.
	setTarget(t, ctx, "worker", "rendered-worker-2")
	setTarget(t, ctx, "infra", "rendered-infra-2")
	waitPool(t, ctx, "worker", "worker rollout", time.Minute, updatedTo("rendered-worker-2", 2))
	waitPool(t, ctx, "infra", "infra rollout", time.Minute, updatedTo("rendered-infra-2", 1))
	for _, name := range []string{twoPools[0], "windows-00"} {
		if got := getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation]; got != "rendered-worker-1" {
			t.Errorf("unmanaged node %s was targeted at %s", name, got)
		}
	}
}

// A node whose agent never acts on its new target is named on the pool once the stall threshold
// passes (the controller stamped when it targeted it, in the same write), with what its agent
// last said; when the agent comes back the node moves on and the condition goes False.
func TestStalledNodeIsNamed(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "stall"
	newPool(t, ctx, role, role, "rendered-stall-old", nil)
	nodes := createNodes(t, ctx, role, 2, "rendered-stall-old", map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo("rendered-stall-old", 2))

	// The first candidate (by name)'s agent is down.
	editNode(t, ctx, nodes[0], func(n *corev1.Node) { n.Labels[nodesim.AgentDownLabel] = "" })
	setTarget(t, ctx, role, "rendered-stall-new")
	want := "Node stall-00 was given rendered-stall-new at "
	p := waitPool(t, ctx, role, "UpdateStalled naming the node", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.UpdateStalled)
		return c != nil && c.Status == corev1.ConditionTrue && strings.HasPrefix(c.Message, want)
	})
	c := poolcondition.Get(&p.Status, poolcondition.UpdateStalled)
	if !strings.Contains(c.Message, "its agent reports Done on rendered-stall-old: it has not started the update; is its agent running?") {
		t.Errorf("UpdateStalled does not say what the agent reported: %s", c.Message)
	}
	if poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Errorf("a stalled node made the pool Degraded: %+v", p.Status.Conditions)
	}
	config, at, ok := protocol.ParseTargeted(getNode(t, ctx, nodes[0]).Annotations[rolloutv1.TargetedAnnotation])
	if !ok || config != "rendered-stall-new" || time.Since(at) > time.Minute {
		t.Errorf("the node's %s records %q at %s (%v)", rolloutv1.TargetedAnnotation, config, at, ok)
	}

	editNode(t, ctx, nodes[0], func(n *corev1.Node) { delete(n.Labels, nodesim.AgentDownLabel) })
	p = waitPool(t, ctx, role, "rollout once the agent is back", time.Minute, updatedTo("rendered-stall-new", 2))
	if c := poolcondition.Get(&p.Status, poolcondition.UpdateStalled); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("UpdateStalled after the node moved on: %+v, want False", c)
	}
}
