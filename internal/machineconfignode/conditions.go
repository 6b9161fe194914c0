package machineconfignode

import (
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// StepKind is what the node agent did or saw on the way to a config.
type StepKind string

const (
	// Prepared: the update to Desired passed the checks and is planned (Actions; Drain says
	// whether the plan drains the node). The first Prepared of an update starts its report over,
	// also of an update to the config the node is in (forced).
	Prepared StepKind = "Prepared"
	// DrainBlocked: the drain controller reports the drain stuck (Message: what blocks it).
	DrainBlocked StepKind = "DrainBlocked"
	// Drained: the drain controller acknowledged the drain for Desired (cordoned and empty).
	Drained StepKind = "Drained"
	// Applied: Desired is written and committed; Reboot says the node reboots into it, OS
	// and SSH whether the OS or core's keys and password changed, Actions what ran instead.
	Applied StepKind = "Applied"
	// Done: the agent verified the node in Current and reported it Done.
	Done StepKind = "Done"
	// Degraded and Unreconcilable: the agent reported the node so (Message: the reason).
	Degraded       StepKind = "Degraded"
	Unreconcilable StepKind = "Unreconcilable"
	// AdoptionPending: a node mco did not boot differs from the config it is offered and waits
	// for the admin's approval (Desired: that config; Message: what adopting would do).
	AdoptionPending StepKind = "AdoptionPending"
)

// TypeAdoptionPending is mco's condition for AdoptionPending (OpenShift has no node mco did not
// boot): True while the node waits for approval, False once it is in a config. It is not one
// of Types, so MachineConfigNodes of other nodes never carry it.
const TypeAdoptionPending mcfgv1.StateProgress = "AdoptionPending"

// Step is one thing the agent did or saw. Current is the config the node is in ("" when it has
// none yet), Desired the one it moves to.
type Step struct {
	Kind    StepKind
	Current string
	Desired string
	Drain   bool
	Reboot  bool
	OS      bool
	SSH     bool
	Actions string
	Message string
}

// Reasons beyond the condition types, which OpenShift also uses as reasons.
const (
	ReasonNotYetOccurred = "NotYetOccurred"
	ReasonNone           = "None"
)

// progress are the conditions of one update, started over by its first Prepared, in the
// order OpenShift first writes them.
var progress = []mcfgv1.StateProgress{
	mcfgv1.MachineConfigNodeUpdatePrepared,
	mcfgv1.MachineConfigNodeUpdateExecuted,
	mcfgv1.MachineConfigNodeUpdatePostActionComplete,
	mcfgv1.MachineConfigNodeUpdateComplete,
	mcfgv1.MachineConfigNodeResumed,
	mcfgv1.MachineConfigNodeUpdateDrained,
	mcfgv1.MachineConfigNodeUpdateFilesAndOS,
	mcfgv1.MachineConfigNodeUpdateCordoned,
	mcfgv1.MachineConfigNodeUpdateRebooted,
	mcfgv1.MachineConfigNodeUpdateUncordoned,
}

// Types are every condition type the agent writes (OpenShift's set without the pinned image
// set and image mode ones, which mco does not implement).
var Types = append(append([]mcfgv1.StateProgress(nil), progress...),
	mcfgv1.MachineConfigNodeUpdated, mcfgv1.MachineConfigNodeNodeDegraded)

// Next is the status after step on node, from prev. It is idempotent (a step seen twice
// changes nothing the second time), so the agent can note a step on every pass and write only
// when the result differs from what is stored. Conditions of types it does not know are kept.
func Next(node string, prev mcfgv1.MachineConfigNodeStatus, step Step, now metav1.Time) mcfgv1.MachineConfigNodeStatus {
	st := prev.DeepCopy()
	c := &conds{list: &st.Conditions, now: now}
	for _, t := range Types {
		if meta.FindStatusCondition(st.Conditions, string(t)) == nil {
			c.notYet(t)
		}
	}
	was := NotYetSet
	if st.ConfigVersion != nil {
		was = st.ConfigVersion.Desired
	}
	current := step.Current
	if current == "" && st.ConfigVersion != nil {
		current = st.ConfigVersion.Current
	}
	desired := was
	switch step.Kind {
	case Prepared:
		// A new update, or the config the node is in applied again (the force file): the
		// report of the last update is over.
		if was != step.Desired || c.get(mcfgv1.MachineConfigNodeUpdateComplete) == metav1.ConditionTrue {
			c.startOver()
		}
		desired = step.Desired
		c.prepared(node, step)
	case DrainBlocked:
		c.drainBlocked(step)
		desired = step.Desired
	case Drained:
		c.drained(step)
		desired = step.Desired
	case Applied:
		c.applied(step)
		desired = step.Desired
	case Done:
		if was != step.Current {
			c.startOver() // an update this report never saw prepared
		}
		c.done(node, step)
		if c.get(TypeAdoptionPending) == metav1.ConditionTrue {
			c.set(TypeAdoptionPending, metav1.ConditionFalse, "Adopted", fmt.Sprintf("Node %s is in %s", node, step.Current))
		}
		desired = step.Current
	case AdoptionPending:
		c.set(TypeAdoptionPending, metav1.ConditionTrue, "ApprovalRequired", step.Message)
	case Degraded, Unreconcilable:
		if step.Desired != step.Current && was != step.Desired {
			// Failed before it was prepared: nothing of the last update applies.
			c.startOver(mcfgv1.MachineConfigNodeUpdatePrepared)
			if step.Kind == Degraded {
				c.notYet(mcfgv1.MachineConfigNodeUpdatePrepared)
			}
		}
		if step.Desired == step.Current {
			desired = step.Current // nothing to validate: the node is (meant to be) in it
		}
		c.degraded(node, step)
	}
	if current == "" {
		current = NotYetSet
	}
	st.ConfigVersion = &mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: current, Desired: desired}
	return *st
}

// conds sets conditions with meta.SetStatusCondition: the transition time moves only when the
// status does.
type conds struct {
	list *[]metav1.Condition
	now  metav1.Time
}

func (c *conds) set(t mcfgv1.StateProgress, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(c.list, metav1.Condition{Type: string(t), Status: status, Reason: reason,
		Message: message, LastTransitionTime: c.now})
}

func (c *conds) get(t mcfgv1.StateProgress) metav1.ConditionStatus {
	if cond := meta.FindStatusCondition(*c.list, string(t)); cond != nil {
		return cond.Status
	}
	return ""
}

func (c *conds) notYet(t mcfgv1.StateProgress) {
	c.set(t, metav1.ConditionFalse, ReasonNotYetOccurred, fmt.Sprintf("This node has not yet entered the %s phase", t))
}

// startOver sets the conditions of an update back to not yet occurred, all but keep (which the
// caller sets next: resetting it first would move its transition time on every pass).
func (c *conds) startOver(keep ...mcfgv1.StateProgress) {
	for _, t := range progress {
		if !slices.Contains(keep, t) {
			c.notYet(t)
		}
	}
}

// child sets a parent condition together with one of its children, as OpenShift does: the
// parent's reason names the child, the child's reason is parent and child joined.
func (c *conds) child(parent mcfgv1.StateProgress, parentStatus metav1.ConditionStatus, parentMessage string,
	child mcfgv1.StateProgress, childStatus metav1.ConditionStatus, childMessage string) {
	c.set(parent, parentStatus, string(child), parentMessage)
	c.set(child, childStatus, string(parent)+string(child), childMessage)
}

func (c *conds) prepared(node string, s Step) {
	c.set(mcfgv1.MachineConfigNodeUpdated, metav1.ConditionFalse, string(mcfgv1.MachineConfigNodeUpdated),
		fmt.Sprintf("Node %s needs an update to %s", node, s.Desired))
	actions := s.Actions
	if actions == "" {
		actions = ReasonNone
	}
	c.set(mcfgv1.MachineConfigNodeUpdatePrepared, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeUpdatePrepared),
		fmt.Sprintf("Update Compatible. Post Cfg Actions: [%s] Drain Required: %t", actions, s.Drain))
	if c.get(mcfgv1.MachineConfigNodeUpdateExecuted) == metav1.ConditionTrue {
		return // a later pass over a step already taken
	}
	if !s.Drain {
		msg := "Node Drain Not required for this update."
		c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown, msg, mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionFalse, msg)
		return
	}
	if c.get(mcfgv1.MachineConfigNodeUpdateDrained) == metav1.ConditionTrue || c.get(mcfgv1.MachineConfigNodeUpdateCordoned) == metav1.ConditionTrue {
		return
	}
	c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown, "Draining Node as part of update executed phase",
		mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionUnknown,
		fmt.Sprintf("Draining node. The drain will not be complete until the drain controller acknowledges %s", protocol.DrainRequest(s.Desired)))
}

func (c *conds) cordoned() {
	c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown, "Cordoned Node as part of update executed phase",
		mcfgv1.MachineConfigNodeUpdateCordoned, metav1.ConditionTrue, "Cordoned node. The node is reporting Unschedulable = true")
}

func (c *conds) drainBlocked(s Step) {
	if c.get(mcfgv1.MachineConfigNodeUpdateExecuted) == metav1.ConditionTrue {
		return
	}
	c.cordoned()
	c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown, "Node Drain has not succeeded",
		mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionUnknown,
		fmt.Sprintf("Node Drain has not succeeded: %s. The drain will not be complete until the drain controller acknowledges %s", s.Message, protocol.DrainRequest(s.Desired)))
}

func (c *conds) drained(s Step) {
	if c.get(mcfgv1.MachineConfigNodeUpdateExecuted) == metav1.ConditionTrue {
		return
	}
	c.cordoned()
	c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionUnknown, "Drained Node as part of update executed phase",
		mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionTrue,
		fmt.Sprintf("Drained node. The drain is complete as the desired drainer matches current drainer: %s", protocol.DrainRequest(s.Desired)))
}

func (c *conds) applied(s Step) {
	c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionTrue, "Updated the Files and OS on disk as a part of the in progress phase",
		mcfgv1.MachineConfigNodeUpdateFilesAndOS, metav1.ConditionTrue,
		fmt.Sprintf("Applied files and new OS config to node. OS did%s need an update. SSH Keys did%s need an update", not(s.OS), not(s.SSH)))
	if s.Reboot {
		if c.get(mcfgv1.MachineConfigNodeUpdateRebooted) == metav1.ConditionTrue {
			return
		}
		c.rebooted(metav1.ConditionUnknown, "Upgrade requires a reboot.")
		return
	}
	if s.Actions == "" || s.Actions == ReasonNone {
		c.set(mcfgv1.MachineConfigNodeUpdatePostActionComplete, metav1.ConditionTrue, ReasonNone, "Changes do not require a reboot")
		return
	}
	c.set(mcfgv1.MachineConfigNodeUpdatePostActionComplete, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeUpdatePostActionComplete),
		fmt.Sprintf("Changes do not require a reboot. Node has run: %s", s.Actions))
}

// rebooted sets the post action and its RebootedNode child; RebootedNode keeps OpenShift's
// reason (it writes it as a parent, not as UpdatePostActionCompleteRebootedNode).
func (c *conds) rebooted(status metav1.ConditionStatus, message string) {
	c.set(mcfgv1.MachineConfigNodeUpdatePostActionComplete, status, string(mcfgv1.MachineConfigNodeUpdateRebooted), message)
	c.set(mcfgv1.MachineConfigNodeUpdateRebooted, status, string(mcfgv1.MachineConfigNodeUpdateRebooted), message)
}

// done completes the update the report followed, if any: a write lost on the way (the agent
// restarted, the API server was away) still ends in the same final state.
func (c *conds) done(node string, s Step) {
	updating := c.get(mcfgv1.MachineConfigNodeUpdatePrepared) == metav1.ConditionTrue
	if updating {
		if c.get(mcfgv1.MachineConfigNodeUpdateRebooted) == metav1.ConditionUnknown {
			// Done is reported only once what booted matches the config, so the reboot came.
			c.rebooted(metav1.ConditionTrue, "Node has rebooted")
		}
		if c.get(mcfgv1.MachineConfigNodeUpdateExecuted) != metav1.ConditionTrue {
			c.child(mcfgv1.MachineConfigNodeUpdateExecuted, metav1.ConditionTrue, "Updated the Files and OS on disk as a part of the in progress phase",
				mcfgv1.MachineConfigNodeUpdateFilesAndOS, metav1.ConditionTrue, "Applied files and new OS config to node.")
		}
		if c.get(mcfgv1.MachineConfigNodeUpdatePostActionComplete) != metav1.ConditionTrue {
			c.set(mcfgv1.MachineConfigNodeUpdatePostActionComplete, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeUpdatePostActionComplete), "Post update actions are complete")
		}
		if c.get(mcfgv1.MachineConfigNodeUpdateDrained) == metav1.ConditionTrue {
			c.child(mcfgv1.MachineConfigNodeUpdateComplete, metav1.ConditionTrue, "Uncordoned Node as part of completing upgrade phase",
				mcfgv1.MachineConfigNodeUpdateUncordoned, metav1.ConditionTrue, "UnCordoned node. The node is reporting Unschedulable = false")
		} else {
			c.set(mcfgv1.MachineConfigNodeUpdateComplete, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeUpdateComplete),
				fmt.Sprintf("Update to %s is complete", s.Current))
		}
	}
	c.set(mcfgv1.MachineConfigNodeResumed, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeResumed),
		fmt.Sprintf("In desired config %s. Resumed normal operations.", s.Current))
	c.set(mcfgv1.MachineConfigNodeUpdated, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeUpdated), fmt.Sprintf("Node %s Updated", node))
	c.set(mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionFalse, string(mcfgv1.MachineConfigNodeNodeDegraded),
		fmt.Sprintf("Node %s is in its desired config %s", node, s.Current))
}

func (c *conds) degraded(node string, s Step) {
	state := "Degraded"
	if s.Kind == Unreconcilable {
		state = "Unreconcilable"
		c.set(mcfgv1.MachineConfigNodeUpdatePrepared, metav1.ConditionUnknown, string(mcfgv1.MachineConfigNodeUpdatePrepared),
			fmt.Sprintf("Update Failed compatibility validation. MachineConfigs %s and %s are not compatible. Err: %s", orNotYetSet(s.Current), s.Desired, s.Message))
	}
	c.set(mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionTrue, string(mcfgv1.MachineConfigNodeNodeDegraded),
		fmt.Sprintf("Node %s is reporting %s: %s", node, state, s.Message))
	msg := fmt.Sprintf("Node %s is %s in %s", node, state, orNotYetSet(s.Current))
	if s.Desired != s.Current {
		msg = fmt.Sprintf("Node %s needs an update to %s", node, s.Desired)
	}
	c.set(mcfgv1.MachineConfigNodeUpdated, metav1.ConditionFalse, string(mcfgv1.MachineConfigNodeUpdated), msg)
}

func not(b bool) string {
	if b {
		return ""
	}
	return " not"
}

func orNotYetSet(config string) string {
	if config == "" {
		return NotYetSet
	}
	return config
}
