package daemon

import (
	"context"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
)

// The agent reports its steps in the status of its Node's MachineConfigNode (the controller
// creates the object). Steps are noted as the agent takes them and written together where the
// agent stops or waits: when an update that drains is prepared (before it drains or writes
// anything), when the drain is reported blocked, before a reboot, and when the node is Done or
// Degraded. An update without a drain costs one write (its steps all go with Done), one with a
// drain two, one with a reboot three; a step seen again on a later pass changes nothing and
// costs none.
//
// The annotations stay the control path: a failed write never fails or holds up a sync. The
// steps are kept and written with a backoff, on the next pass after it.

// Bounds of the retry delay of a failed status write, and of one read or write.
const (
	statusRetryMin = 2 * time.Second
	statusRetryMax = 5 * time.Minute
	statusTimeout  = 10 * time.Second
	// maxPendingSteps bounds what piles up while writes fail; the oldest go first, and with
	// them only detail (every step carries the configs it is about).
	maxPendingSteps = 16
)

// statusReport is what the agent knows of its MachineConfigNode's status.
type statusReport struct {
	// stored is the status as last read or written; nil until read.
	stored *mcfgv1.MachineConfigNodeStatus
	// spec is the generation and desired config of the spec last read (with stored).
	spec    observedSpec
	pending []pendingStep
	// failed is set while a write is owed; notBefore is when to try it again.
	failed    bool
	notBefore time.Time
	backoff   time.Duration
	retry     *time.Timer
	// absent: the cluster serves no MachineConfigNode kind; nothing is written.
	absent bool
}

type pendingStep struct {
	step machineconfignode.Step
	at   metav1.Time
}

// noteStep remembers a step for the next write.
func (a *Agent) noteStep(step machineconfignode.Step) {
	r := &a.s.status
	if r.absent {
		return
	}
	if n := len(r.pending); n > 0 && r.pending[n-1].step == step {
		return
	}
	r.pending = append(r.pending, pendingStep{step: step, at: metav1.Now().Rfc3339Copy()})
	if len(r.pending) > maxPendingSteps {
		r.pending = r.pending[len(r.pending)-maxPendingSteps:]
	}
}

// publishStep notes a step and writes what is pending.
func (a *Agent) publishStep(ctx context.Context, step machineconfignode.Step) {
	a.noteStep(step)
	a.publishStatus(ctx)
}

// publishStatus writes the pending steps if they change the stored status.
func (a *Agent) publishStatus(ctx context.Context) {
	r := &a.s.status
	if r.absent || len(r.pending) == 0 || time.Now().Before(r.notBefore) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	if r.stored == nil {
		m, err := a.kube.machineConfigNode(ctx)
		if err != nil {
			a.statusFailed(err)
			return
		}
		r.remember(m)
	}
	want := *r.stored
	for _, p := range r.pending {
		want = machineconfignode.Next(a.opts.NodeName, want, p.step, p.at)
	}
	if want.ConfigVersion != nil && want.ConfigVersion.Desired != r.spec.desired {
		// The controller writes the spec's desired config when the Node's changes, as the
		// agent starts the update: read it (a read wakes no watcher) rather than report an old
		// generation and write again for the new one.
		m, err := a.kube.machineConfigNode(ctx)
		if err != nil {
			a.statusFailed(err)
			return
		}
		r.spec = mcnSpecOf(m)
	}
	// A second round only when the spec the write returned is the one this status reports on
	// and is newer than what was read: the controller wrote it in between.
	for range 2 {
		want.Conditions = a.pinnedConds.overlay(want.Conditions)
		want.ObservedGeneration = r.spec.observed(want)
		if equality.Semantic.DeepEqual(want, *r.stored) {
			break
		}
		m, err := a.kube.patchMachineConfigNodeStatus(ctx, want)
		if err != nil {
			if apierrors.IsNotFound(err) {
				r.stored = nil // deleted: the next one starts from whatever the controller creates
			}
			a.statusFailed(err)
			return
		}
		r.remember(m)
		want = *r.stored
	}
	r.pending, r.failed, r.backoff, r.notBefore = nil, false, 0, time.Time{}
}

// statusFailed schedules another try, or gives up for good on a cluster without the kind.
func (a *Agent) statusFailed(err error) {
	r := &a.s.status
	if meta.IsNoMatchError(err) {
		r.absent, r.pending = true, nil
		a.opts.Log.Warn("the cluster has no MachineConfigNode kind; not reporting one", "node", a.opts.NodeName, "err", err)
		return
	}
	r.backoff = min(max(2*r.backoff, statusRetryMin), statusRetryMax)
	r.failed, r.notBefore = true, time.Now().Add(r.backoff)
	if r.retry != nil {
		r.retry.Stop()
	}
	r.retry = time.AfterFunc(r.backoff, a.poke)
	a.opts.Log.Warn("could not write the MachineConfigNode status; the update goes on, the write is retried",
		"node", a.opts.NodeName, "in", r.backoff, "err", err)
}

// publishState reports a state the agent just wrote to the Node.
func (a *Agent) publishState(ctx context.Context, state protocol.NodeState, reason string, extra map[string]*string) {
	current, desired := a.configPair()
	switch state {
	case protocol.NodeDone:
		if c := extra[protocol.CurrentConfigAnnotation]; c != nil {
			current = *c
		}
		a.publishStep(ctx, machineconfignode.Step{Kind: machineconfignode.Done, Current: current, Desired: current})
	case protocol.NodeDegraded:
		a.publishStep(ctx, machineconfignode.Step{Kind: machineconfignode.Degraded, Current: current, Desired: desired, Message: reason})
	case protocol.NodeUnreconcilable:
		a.publishStep(ctx, machineconfignode.Step{Kind: machineconfignode.Unreconcilable, Current: current, Desired: desired, Message: reason})
	}
}

// configPair is the config the node is in and the one it is asked for, as sync decides them:
// the disk's record over the annotation, desired defaulting to current.
func (a *Agent) configPair() (current, desired string) {
	node := a.kube.node()
	if node == nil {
		return "", ""
	}
	if committed, err := a.committedName(); err == nil {
		current = committed
	}
	if current == "" {
		current = annotation(node, protocol.CurrentConfigAnnotation)
	}
	desired = annotation(node, protocol.DesiredConfigAnnotation)
	if desired == "" {
		desired = current
	}
	return current, desired
}

// remember keeps what the agent needs of its MachineConfigNode as read or written.
func (r *statusReport) remember(m *mcfgv1.MachineConfigNode) {
	r.stored, r.spec = &m.Status, mcnSpecOf(m)
}

func mcnSpecOf(m *mcfgv1.MachineConfigNode) observedSpec {
	return observedSpec{generation: m.Generation, desired: m.Spec.ConfigVersion.Desired}
}

// observedSpec is the spec of the MachineConfigNode the agent last saw.
type observedSpec struct {
	generation int64
	desired    string
}

// observed is status.observedGeneration for st: the spec's generation once st reports on the
// config that spec asks for, the stored value until then (the controller may have written a
// newer spec than the agent has seen: the response to the agent's next write brings it, and the
// write after that reports it). Never lower than stored: the schema refuses a decrease, and an
// OpenShift agent before mco wrote generation+1.
func (s observedSpec) observed(st mcfgv1.MachineConfigNodeStatus) int64 {
	if st.ConfigVersion != nil && s.desired != "" && st.ConfigVersion.Desired == s.desired {
		return max(s.generation, st.ObservedGeneration)
	}
	return st.ObservedGeneration
}
