// Package nodesim plays the node side of the annotation protocol for tests and benchmarks, where
// there is no kubelet and no host: an Agent watches simulated Nodes and answers the node
// controller and the drain controller the way mco's daemon does, instantly.
package nodesim

import (
	"context"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
)

// SimulatedLabel marks the Nodes an Agent plays; others are left alone.
const SimulatedLabel = "nodesim.mco.dev/simulated"

// Agent answers for every Node labelled SimulatedLabel. Register it with a manager of its own, so
// its reads and writes are not the controller's.
// AgentDownLabel on a Node makes the simulated agent leave it alone, as a node whose agent does
// not run.
const AgentDownLabel = "nodesim.mco.dev/agent-down"

type Agent struct {
	Client client.Client
	// Drain makes every update disruptive: the agent asks for a drain before applying and for an
	// uncordon after, and waits for each acknowledgement. Without it updates are rebootless and
	// applied in one write.
	Drain bool
	// Workers is how many nodes the agent handles at once (default 4).
	Workers int
	// Report makes the agent write what the real agent writes besides the next protocol step,
	// so that a benchmark loads the API server as real nodes do: state Working before it
	// applies (a rebootless update then takes two Node writes, as the real agent's does; with
	// Drain the drain request still rides with it), its MachineConfigNode's status and the
	// Updated event (report.go).
	Report bool

	mu       sync.Mutex
	failures map[string]string
	statuses map[string]*mcfgv1.MachineConfigNodeStatus
	held     map[string][]machineconfignode.Step
	recorder record.EventRecorder
	reader   client.Reader
}

// Fail makes the agent report node Degraded with reason instead of applying its next config,
// until Heal.
func (a *Agent) Fail(node, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures == nil {
		a.failures = map[string]string{}
	}
	a.failures[node] = reason
}

// Heal lets the node apply again.
func (a *Agent) Heal(node string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.failures, node)
}

func (a *Agent) failure(node string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failures[node]
}

// SetupWithManager registers the agent as a controller named name.
func (a *Agent) SetupWithManager(mgr ctrl.Manager, name string) error {
	simulated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[SimulatedLabel]
		return ok
	})
	workers := a.Workers
	if workers == 0 {
		workers = 4
	}
	// As the agent, which reads its MachineConfigNode once and remembers what it wrote.
	a.reader = mgr.GetAPIReader()
	a.recorder = mgr.GetEventRecorderFor("machineconfigdaemon")
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&corev1.Node{}, builder.WithPredicates(simulated)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(a)
}

// Reconcile takes the node one protocol step further.
func (a *Agent) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := a.Client.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	set, retry := a.step(node)
	if len(set) == 0 {
		return retry, nil
	}
	before := node.DeepCopy()
	for k, v := range set {
		if v == "" {
			delete(node.Annotations, k)
		} else {
			node.Annotations[k] = v
		}
	}
	// The optimistic lock keeps a stale cache from replaying a step.
	err := a.Client.Patch(ctx, node, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if err == nil {
		a.report(ctx, before, set)
	}
	return retry, client.IgnoreNotFound(err)
}

// step decides the annotations to write next ("" deletes); nothing means wait for the
// controllers. Like the real agent, a node fails when it applies, so with Drain after its
// drain (it stays cordoned), and a node back in its config asks for the uncordon of whatever
// drain it was left with. A failing node is looked at again shortly, since Heal sends no event.
func (a *Agent) step(n *corev1.Node) (map[string]string, reconcile.Result) {
	ann := n.Annotations
	cur, want := ann[protocol.CurrentConfigAnnotation], ann[protocol.DesiredConfigAnnotation]
	state := protocol.NodeState(ann[protocol.StateAnnotation])
	if _, down := n.Labels[AgentDownLabel]; want == "" || down {
		return nil, reconcile.Result{}
	}
	if cur == want {
		uncordon := protocol.UncordonRequest(want)
		if drain := ann[protocol.DesiredDrainAnnotation]; a.Drain && drain != "" && drain != uncordon {
			return map[string]string{protocol.DesiredDrainAnnotation: uncordon}, reconcile.Result{}
		}
		if a.Drain && ann[protocol.DesiredDrainAnnotation] == uncordon &&
			(ann[protocol.LastAppliedDrainAnnotation] != uncordon || ann[protocol.DrainStartedAtAnnotation] != "") {
			return nil, reconcile.Result{} // waiting for the uncordon
		}
		if state != protocol.NodeDone {
			return map[string]string{protocol.StateAnnotation: string(protocol.NodeDone), protocol.ReasonAnnotation: ""}, reconcile.Result{}
		}
		return nil, reconcile.Result{}
	}
	drain := protocol.DrainRequest(want)
	switch {
	case a.Drain && ann[protocol.DesiredDrainAnnotation] != drain:
		return map[string]string{
			protocol.StateAnnotation:        string(protocol.NodeWorking),
			protocol.ReasonAnnotation:       "",
			protocol.DesiredDrainAnnotation: drain,
		}, reconcile.Result{}
	case a.Drain && ann[protocol.LastAppliedDrainAnnotation] != drain:
		return nil, reconcile.Result{} // waiting for the drain
	}
	if reason := a.failure(n.Name); reason != "" {
		retry := reconcile.Result{RequeueAfter: 200 * time.Millisecond}
		if state == protocol.NodeDegraded && ann[protocol.ReasonAnnotation] == reason {
			return nil, retry
		}
		return map[string]string{protocol.StateAnnotation: string(protocol.NodeDegraded), protocol.ReasonAnnotation: reason}, retry
	}
	if !a.Drain {
		if a.Report && state != protocol.NodeWorking && state != protocol.NodeDegraded {
			// The real agent marks the node Working once the update passed its checks (a
			// failing node keeps its failure until Done).
			return map[string]string{protocol.StateAnnotation: string(protocol.NodeWorking), protocol.ReasonAnnotation: ""}, reconcile.Result{}
		}
		return map[string]string{
			protocol.CurrentConfigAnnotation: want,
			protocol.StateAnnotation:         string(protocol.NodeDone),
			protocol.ReasonAnnotation:        "",
		}, reconcile.Result{}
	}
	// Drained: apply, then ask for the uncordon.
	return map[string]string{
		protocol.CurrentConfigAnnotation: want,
		protocol.DesiredDrainAnnotation:  protocol.UncordonRequest(want),
	}, reconcile.Result{}
}
