package node

import (
	"context"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestSupersededTargetMovesWithoutCapacity: with maxUnavailable 1, a node whose agent is still
// planning its update to a target the pool has replaced is moved to the new target at once
// (it is the one unavailable node already), while a node whose agent asked for its drain keeps
// its target and no healthy node starts beside them.
func TestSupersededTargetMovesWithoutCapacity(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "supersede"
	oldCfg, partial, full := "rendered-supersede-old", "rendered-supersede-partial", "rendered-supersede-full"
	newPool(t, ctx, role, role, oldCfg, nil)
	nodes := createNodes(t, ctx, role, 3, oldCfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo(oldCfg, 3))
	planning, draining, idle := nodes[0], nodes[1], nodes[2]
	// Paused while the test sets the scene, so the controller does not act on half of it.
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Spec.Paused = true })
	// The test plays the agents: the simulated one must not move these nodes on.
	for _, name := range nodes {
		n := getNode(t, ctx, name)
		delete(n.Labels, nodesim.SimulatedLabel)
		if err := k8sClient.Update(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	annotate := func(name string, set map[string]string) {
		t.Helper()
		n := getNode(t, ctx, name)
		for k, v := range set {
			n.Annotations[k] = v
		}
		if err := k8sClient.Update(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// Two nodes were pointed at the partial config, one each from earlier decisions (as with a
	// larger maxUnavailable before): one agent is planning, the other asked for its drain.
	annotate(planning, map[string]string{protocol.DesiredConfigAnnotation: partial, protocol.StateAnnotation: string(protocol.NodeWorking)})
	annotate(draining, map[string]string{protocol.DesiredConfigAnnotation: partial, protocol.StateAnnotation: string(protocol.NodeWorking),
		protocol.DesiredDrainAnnotation: protocol.DrainRequest(partial)})
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name, p.Spec.Paused = full, false })

	deadline := time.Now().Add(time.Minute)
	for getNode(t, ctx, planning).Annotations[protocol.DesiredConfigAnnotation] != full {
		if time.Now().After(deadline) {
			t.Fatalf("%s, still planning for the superseded %s, was not moved to %s", planning, partial, full)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // anything else the controller would do, it has done by now
	if got := getNode(t, ctx, draining).Annotations[protocol.DesiredConfigAnnotation]; got != partial {
		t.Errorf("%s asked for its drain for %s, yet was moved to %s", draining, partial, got)
	}
	if got := getNode(t, ctx, idle).Annotations[protocol.DesiredConfigAnnotation]; got != oldCfg {
		t.Errorf("%s was started (desiredConfig %s) while two nodes are unavailable, maxUnavailable 1", idle, got)
	}
}
