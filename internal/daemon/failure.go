package daemon

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// failure is a step the agent could not take, as the Node is to show it: the state (Degraded
// or Unreconcilable), the reason of its Warning event, and the error that becomes the Node's
// reason. The steps of a pass (sync, settle, update, the journal's) return it instead of
// writing it; the loop reports it in one place (reportFailure), so every failure reaches the
// Node, its events, its MachineConfigNode and the metrics the same way.
type failure struct {
	state       protocol.NodeState
	eventReason string
	err         error
	// retry, when set, also fails the pass, so the loop tries again with backoff (an API read
	// or a host call that may answer next time). Nil when the report is the outcome and the
	// node waits for something to change.
	retry error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// degraded is a Degraded report that is the pass's outcome.
func degraded(eventReason string, err error) error {
	return &failure{state: protocol.NodeDegraded, eventReason: eventReason, err: err}
}

// degradedRetrying is a Degraded report whose cause the loop also retries.
func degradedRetrying(eventReason string, err error) error {
	return &failure{state: protocol.NodeDegraded, eventReason: eventReason, err: err, retry: err}
}

// reportFailure turns a pass's failure into the Node's report: the state and reason
// annotations, and, when they change, a log line, a Warning event and the pivot-error count;
// report also publishes the MachineConfigNode and the state metric. Any other error passes
// through untouched. What it returns fails the pass: the write's error, and the failure's own
// when it is to be retried.
func (a *Agent) reportFailure(ctx context.Context, err error) error {
	f := (*failure)(nil)
	if !errors.As(err, &f) {
		return err
	}
	node := a.kube.node()
	if node.Annotations[protocol.StateAnnotation] != string(f.state) || node.Annotations[protocol.ReasonAnnotation] != truncate(f.err.Error()) {
		a.opts.Log.Error("node degraded", "node", a.opts.NodeName, "state", f.state, "err", f.err)
		a.kube.event(corev1.EventTypeWarning, f.eventReason, "%s", f.err)
		if pivotFailures[f.eventReason] {
			a.metrics.pivotErrors.Inc()
		}
	}
	writeErr := a.report(ctx, f.state, f.err.Error(), nil)
	if f.retry == nil {
		return writeErr
	}
	return errors.Join(writeErr, f.retry)
}

// pivotFailures are the failures that mean an OS change did not come into effect after its
// reboot; counted once each time the node enters one (staging failures count in apply).
var pivotFailures = map[string]bool{"BootedConfigMismatch": true, "FirstBootFailed": true}
