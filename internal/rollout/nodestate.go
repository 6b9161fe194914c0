package rollout

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// The predicates below read one node's annotations and conditions. They are the vocabulary of
// the counts and of the capacity rule, so each says precisely what it means.

// Managed reports whether mco tracks the node's config: its agent reported the config the node
// is in (currentConfig), or the node was given one to move to (desiredConfig; a node mco did
// not boot gets it when its adoption starts, before its agent reports any). A managed node is
// counted by its pool, and is unavailable until its agent reports Done. Until then the node is
// still joining, or waiting to be adopted: it is neither counted nor targeted, only offered
// its pool's target (see adoption.go).
func Managed(n *corev1.Node) bool {
	return n.Annotations[protocol.CurrentConfigAnnotation] != "" || n.Annotations[protocol.DesiredConfigAnnotation] != ""
}

func current(n *corev1.Node) string { return n.Annotations[protocol.CurrentConfigAnnotation] }
func desired(n *corev1.Node) string { return n.Annotations[protocol.DesiredConfigAnnotation] }

// state is the agent's report as written. Missing or empty is no report at all, never Done: a
// node is Done only once its agent said so (as OpenShift counts it), so a Node whose agent
// never ran, or whose annotations an admin cleared, is not counted updated or available.
func state(n *corev1.Node) protocol.NodeState {
	return protocol.NodeState(n.Annotations[protocol.StateAnnotation])
}

// Ready is the scheduler's view: Ready=True, disk pressure and network unavailability reported
// False where reported, and not cordoned. A cordoned node counts as unavailable even when the
// kubelet is healthy.
func Ready(n *corev1.Node) bool { return !n.Spec.Unschedulable && Healthy(n) }

// Healthy is Ready ignoring the cordon: the kubelet reports Ready=True, and DiskPressure and
// NetworkUnavailable, where present, are False. Unknown counts against the node, as in
// OpenShift: a kubelet that stopped reporting pressure has not shown there is none. Unlike
// OpenShift, a node with no Ready condition at all is not healthy: its kubelet has never said
// it is ready.
func Healthy(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		switch c.Type {
		case corev1.NodeReady:
			ready = c.Status == corev1.ConditionTrue
		case corev1.NodeDiskPressure, corev1.NodeNetworkUnavailable:
			if c.Status != corev1.ConditionFalse {
				return false
			}
		}
	}
	return ready
}

// config is what a node's three most read annotations say (currentConfig, desiredConfig,
// state), read once. A decision applies several of the rules below to each of thousands of
// nodes, and each rule read the annotations again: at 5,000 nodes those map lookups were most
// of a decision's CPU (bench/rollout -profile). The rules are defined on it, and the predicates
// on a Node read it and apply them, so a loop that reads it once applies the very same rules.
type config struct {
	current, desired string
	state            protocol.NodeState
}

func configOf(n *corev1.Node) config {
	return config{current: current(n), desired: desired(n), state: state(n)}
}

func (c config) done() bool {
	return c.current != "" && c.current == c.desired && c.state == protocol.NodeDone
}

func (c config) degraded() bool {
	return c.state == protocol.NodeDegraded || c.state == protocol.NodeUnreconcilable
}

func (c config) failing() bool { return c.current != c.desired && c.degraded() }

func (c config) updatedTo(target string) bool { return c.done() && c.desired == target }

// Done: the agent reports the node is in the config it was asked for and has nothing to do.
func Done(n *corev1.Node) bool { return configOf(n).done() }

// Degraded: the agent reports an error, whatever config it was working on.
func Degraded(n *corev1.Node) bool { return config{state: state(n)}.degraded() }

// Failing: the agent gave up moving the node to its desired config.
func Failing(n *corev1.Node) bool { return configOf(n).failing() }

// Unavailable is the definition pool status reports and the rollout limit bounds: not Ready
// (which includes cordoned) or not Done (updating or failing).
func Unavailable(n *corev1.Node) bool { return unavailable(Ready(n), configOf(n)) }

func unavailable(ready bool, c config) bool { return !ready || !c.done() }

// UpdatedTo: Done and asked for target, so running it.
func UpdatedTo(n *corev1.Node, target string) bool { return configOf(n).updatedTo(target) }

// WantsTaint reports whether a node whose desired config is desired may carry
// UpdateInProgress:PreferNoSchedule: it is behind the pool's target, so it will be changed soon.
// The node controller taints it only where that change may drain it (drainForecast): then new
// pods, and pods drained off the nodes updated before it, are better placed elsewhere; a
// change that drains no node moves no pods. It takes the config rather than the Node because
// the controller decides it for the config it is about to write.
func WantsTaint(desired, target string) bool { return target != "" && desired != target }

// CordonedForUpdate: the node is cordoned because mco drained it for an update (the drain
// controller started or acknowledged the drain the agent asked for), not by an admin. The drain
// may name an earlier target than the desired config: an agent whose target was superseded
// after its drain moves on under that drain (internal/daemon, supersede.go). Such a node may be
// given another config: the agent's next drain or uncordon request supersedes the one that
// cordoned it.
func CordonedForUpdate(n *corev1.Node) bool {
	if desired(n) == "" {
		return false
	}
	return DrainedForUpdate(n) || (mcoDrainRequested(n) && n.Annotations[protocol.DrainStartedAtAnnotation] != "")
}

// DrainedForUpdate: mco's drain, for whichever config, was carried out and the node is still
// cordoned, so it is as drained as a new drain would leave it. An uncordon, by the agent's
// request or an admin's, ends it.
func DrainedForUpdate(n *corev1.Node) bool {
	return mcoDrainRequested(n) && n.Annotations[protocol.LastAppliedDrainAnnotation] == n.Annotations[protocol.DesiredDrainAnnotation]
}

// mcoDrainRequested: the node is cordoned and the agent's last request was a drain.
func mcoDrainRequested(n *corev1.Node) bool {
	return n.Spec.Unschedulable && strings.HasPrefix(n.Annotations[protocol.DesiredDrainAnnotation], protocol.DrainRequest(""))
}

// Updating: the node is between configs or has a reboot queued, so mco is why it is down if
// it is down.
func Updating(n *corev1.Node) bool { return updating(n, configOf(n)) }

func updating(n *corev1.Node, c config) bool {
	return !c.done() || n.Annotations[protocol.PostConfigActionAnnotation] != ""
}

// NotReadySince is when the node's Ready condition last left True, and whether it is not
// Ready now. A node without a Ready condition has never been Ready; it has no such time.
func NotReadySince(n *corev1.Node) (time.Time, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return time.Time{}, false
			}
			return c.LastTransitionTime.Time, !c.LastTransitionTime.IsZero()
		}
	}
	return time.Time{}, false
}
