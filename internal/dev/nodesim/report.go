package nodesim

import (
	"context"
	"encoding/json"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
)

// ReasonUpdated is the event the real agent emits on a Node it updated without a reboot.
const ReasonUpdated = "Updated"

// report writes, with Report set, what the real agent writes around a protocol step besides the
// annotations (internal/daemon nodestatus.go, update.go): its MachineConfigNode's status once
// the update is prepared (with the state Working) if it drains, and once it is Done (with the
// prepared step of an update without a drain), each a merge patch of the status computed by
// machineconfignode.Next as the agent computes it, the first after one uncached read; and the
// Updated event of a rebootless update. A failed write is dropped: the
// agent retries later, off the update's path.
func (a *Agent) report(ctx context.Context, n *corev1.Node, set map[string]string) {
	if !a.Report {
		return
	}
	cur, want := n.Annotations[protocol.CurrentConfigAnnotation], n.Annotations[protocol.DesiredConfigAnnotation]
	switch {
	case set[protocol.StateAnnotation] == string(protocol.NodeWorking):
		prepared := machineconfignode.Step{Kind: machineconfignode.Prepared, Current: cur, Desired: want, Drain: a.Drain}
		if a.Drain {
			// The agent waits for the drain: it writes the prepared step now.
			a.publish(ctx, n.Name, prepared)
		} else {
			// Nothing to wait for: the step goes with Done (or a failure), in one write.
			a.holdStep(n.Name, prepared)
		}
	case set[protocol.StateAnnotation] == string(protocol.NodeDone) && set[protocol.CurrentConfigAnnotation] != "":
		// Rebootless: applied and Done in one pass, as the agent writes them.
		a.recorder.Eventf(n, corev1.EventTypeNormal, ReasonUpdated, "Applied %s without a reboot", want)
		a.publish(ctx, n.Name, append(a.heldSteps(n.Name), machineconfignode.Step{Kind: machineconfignode.Applied, Current: cur, Desired: want},
			machineconfignode.Step{Kind: machineconfignode.Done, Current: want, Desired: want})...)
	case set[protocol.StateAnnotation] == string(protocol.NodeDone):
		// Back from a drained update.
		a.publish(ctx, n.Name, machineconfignode.Step{Kind: machineconfignode.Done, Current: want, Desired: want})
	case set[protocol.StateAnnotation] == string(protocol.NodeDegraded):
		a.publish(ctx, n.Name, append(a.heldSteps(n.Name),
			machineconfignode.Step{Kind: machineconfignode.Degraded, Current: cur, Desired: want, Message: set[protocol.ReasonAnnotation]})...)
	}
}

// holdStep keeps a step to write with the node's next status write.
func (a *Agent) holdStep(node string, s machineconfignode.Step) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held == nil {
		a.held = map[string][]machineconfignode.Step{}
	}
	a.held[node] = append(a.held[node], s)
}

// heldSteps returns and forgets the steps held for the node.
func (a *Agent) heldSteps(node string) []machineconfignode.Step {
	a.mu.Lock()
	defer a.mu.Unlock()
	held := a.held[node]
	delete(a.held, node)
	return held
}

// publish writes the node's MachineConfigNode status after steps, if they change it.
func (a *Agent) publish(ctx context.Context, node string, steps ...machineconfignode.Step) {
	stored, err := a.storedStatus(ctx, node)
	if err != nil {
		return
	}
	now := metav1.Now().Rfc3339Copy()
	next := *stored
	for _, s := range steps {
		next = machineconfignode.Next(node, next, s, now)
	}
	if equality.Semantic.DeepEqual(next, *stored) {
		return
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": next.Conditions, "configVersion": next.ConfigVersion}})
	if err != nil {
		return
	}
	m := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := a.Client.Status().Patch(ctx, m, client.RawPatch(types.MergePatchType, patch)); err != nil {
		a.forgetStatus(node)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses[node] = &m.Status
}

// storedStatus is the node's MachineConfigNode status as last read or written.
func (a *Agent) storedStatus(ctx context.Context, node string) (*mcfgv1.MachineConfigNodeStatus, error) {
	a.mu.Lock()
	st := a.statuses[node]
	a.mu.Unlock()
	if st != nil {
		return st, nil
	}
	m := &mcfgv1.MachineConfigNode{}
	if err := a.reader.Get(ctx, client.ObjectKey{Name: node}, m); err != nil {
		return nil, fmt.Errorf("reading MachineConfigNode %s: %w", node, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.statuses == nil {
		a.statuses = map[string]*mcfgv1.MachineConfigNodeStatus{}
	}
	a.statuses[node] = &m.Status
	return &m.Status, nil
}

func (a *Agent) forgetStatus(node string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.statuses, node)
}
