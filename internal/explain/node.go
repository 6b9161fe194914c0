package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/eviction"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/statusview"
)

// Node explains what mco is doing with the node called name.
func Node(c Cluster, name string) (Explanation, error) {
	n := c.node(name)
	if n == nil {
		return Explanation{}, &NotFoundError{Kind: "node", Name: name}
	}
	x := Explanation{Object: "node/" + name}
	// The node's own events, and its pool's that name it (SetDesiredConfig, NodeUnresponsive).
	poolName, poolErr := rollout.NewPools(c.poolPointers()).PrimaryPool(n)
	pool := c.pool(poolName)
	events := newestFirst(c.Events, func(ev corev1.Event) bool {
		o := ev.InvolvedObject
		return o.Kind == "Node" && o.Name == name ||
			pool != nil && o.Kind == "MachineConfigPool" && o.Name == pool.Name && mentions(ev.Message, name)
	})
	e := nodeExplainer{c: c, n: n, pool: pool, events: events}
	switch {
	case n.Labels[rollout.OSLabel] == "windows":
		x.Summary = "not managed: a Windows node"
		x.Doing, x.Next = "nothing: mco never manages Windows nodes", "nothing"
	case poolErr != nil:
		var amb *rollout.AmbiguousPoolError
		x.Summary = "not managed: in two custom pools"
		x.Doing, x.Next = "nothing: a node two custom pools select is left alone", "nothing until one pool selects it"
		x.Why = []string{poolErr.Error()}
		if errors.As(poolErr, &amb) {
			x.YouCan = []string{fmt.Sprintf("remove the labels of all but one of the pools %s from the node (`kubectl label node %s KEY-`)", strings.Join(amb.Pools, ", "), name)}
		}
	case pool == nil:
		x.Summary = "not managed: no pool selects it"
		x.Doing, x.Next = "nothing", "nothing until a MachineConfigPool's nodeSelector matches its labels"
		if !rollout.Managed(n) {
			x.Next += "; that pool then offers the node its config (adoption-target), and adopts it once its agent compared the host and you approved"
		}
		x.Why = rollout.NoPool(n, c.poolPointers())
		role := protocol.WorkerRoleLabel
		if _, controlPlane := n.Labels[controlPlaneLabel]; controlPlane {
			role = protocol.MasterRoleLabel
		}
		x.YouCan = []string{fmt.Sprintf("label it for a pool, e.g. `kubectl label node %s %s=`", name, role)}
	case !rollout.Managed(n):
		e.unmanaged(&x)
	default:
		e.explain(&x)
	}
	x.Evidence = append(x.Evidence, annotationEvidence(n)...)
	x.Evidence = append(x.Evidence, nodeConditionEvidence(n, c.Now)...)
	x.Evidence = append(x.Evidence, machineConfigNodeEvidence(c.machineConfigNode(name))...)
	if pool != nil {
		x.Evidence = append(x.Evidence, poolConditionEvidence(pool)...)
	}
	x.Evidence = append(x.Evidence, eventEvidence(events, c.Now)...)
	if c.NodePods.Node == name {
		x.Evidence = append(x.Evidence, podEvidence(c.NodePods, drainWaits(c.NodePods.Pods, c.NodePods.Budgets))...)
	}
	return x, nil
}

type nodeExplainer struct {
	c      Cluster
	n      *corev1.Node
	pool   *mcfgv1.MachineConfigPool
	events []corev1.Event
}

// controlPlaneLabel is the role label kubeadm gives its control-plane nodes (OpenShift's built-in
// master pool selects node-role.kubernetes.io/master instead).
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

func (e nodeExplainer) annotation(key string) string { return e.n.Annotations[key] }

// explain reads a managed node: a failure first, then a node that did not come back, then the
// step of its update, then whether its pool holds it back.
func (e nodeExplainer) explain(x *Explanation) {
	n, now := e.n, e.c.Now
	current, desired := e.annotation(protocol.CurrentConfigAnnotation), e.annotation(protocol.DesiredConfigAnnotation)
	target := e.pool.Spec.Configuration.Name
	in := fmt.Sprintf("mcp/%s", e.pool.Name)
	notReadySince, notReady := rollout.NotReadySince(n)
	threshold := e.c.threshold()
	// The step of the update towards desired, read as `mco status` reads it.
	phase := statusview.NodePhase(n, desired)

	switch {
	case rollout.Degraded(n):
		p := diagnose(n, e.events)
		state := e.annotation(protocol.StateAnnotation)
		x.Summary = fmt.Sprintf("%s (%s) in %s", state, p.Kind, in)
		if current != desired {
			x.Doing = fmt.Sprintf("stuck between configs: runs %s, asked for %s", current, desired)
		} else {
			x.Doing = fmt.Sprintf("not updating: runs %s, its desired config", current)
		}
		x.Why = []string{p.Why}
		x.Next = p.Next
		x.YouCan = p.YouCan
	case notReady && rollout.Updating(n) && now.Sub(notReadySince) >= threshold:
		x.Summary = fmt.Sprintf("not back from its update: NotReady for %s in %s", age(now.Sub(notReadySince)), in)
		x.Doing = fmt.Sprintf("updating from %s to %s", current, desired)
		why := fmt.Sprintf("the node has not been Ready since %s (%s ago, past the %s threshold) in the middle of its update to %s", stamp(notReadySince), age(now.Sub(notReadySince)), threshold, desired)
		if e.annotation(protocol.PostConfigActionAnnotation) == protocol.PostConfigActionRebooting {
			why += "; it went down for the reboot the update needs and did not come back"
		}
		x.Why = []string{why}
		x.Next = fmt.Sprintf("%s reports it NodeUnresponsive and starts no further node until it is Ready again or its Node is deleted; once Ready, the agent checks what booted and reports Done", in)
		x.YouCan = []string{
			"look at the machine: console, power, the kubelet (`journalctl -u kubelet`)",
			fmt.Sprintf("if the machine is gone for good: `kubectl delete node %s` (the pool's rollout finishes on the rest)", n.Name),
		}
	case phase == statusview.PhaseDraining:
		e.drain(x, desired, in)
	case e.annotation(protocol.PostConfigActionAnnotation) == protocol.PostConfigActionRebooting:
		x.Summary = fmt.Sprintf("rebooting into %s in %s", desired, in)
		x.Doing = fmt.Sprintf("rebooting: the agent wrote %s and queued the reboot it needs", desired)
		x.Next = "once the node is back, the agent checks what booted (kernel arguments, OS image) and reports Done; then the drain controller uncordons it"
		if notReady {
			x.Doing += fmt.Sprintf("; NotReady since %s (%s ago)", stamp(notReadySince), age(now.Sub(notReadySince)))
			x.Next += fmt.Sprintf("; if it is still NotReady at %s (the %s threshold), the pool reports it unresponsive", stamp(notReadySince.Add(threshold)), threshold)
		}
	case current != desired && protocol.NodeState(e.annotation(protocol.StateAnnotation)) == protocol.NodeWorking:
		x.Summary = fmt.Sprintf("updating to %s in %s: %s", desired, in, phase)
		if phase == statusview.PhaseCordoned {
			x.Doing = fmt.Sprintf("drained and cordoned; the agent is applying %s", desired)
		} else {
			x.Doing = fmt.Sprintf("the agent is applying %s (checking drift, planning, writing files)", desired)
		}
		x.Next = "the agent writes the config in one transaction, reboots if the change needs it, asks for an uncordon and reports Done"
	case current != desired:
		x.Summary = fmt.Sprintf("queued for %s in %s: the agent has not started", desired, in)
		x.Doing = fmt.Sprintf("waiting for the node's agent to start the update from %s to %s", current, desired)
		x.Next = "the agent starts at its next sync (it watches its Node)"
		x.YouCan = []string{"if this lasts, check the node's agent is running: `journalctl -u mco-daemon` on it"}
	case e.annotation(protocol.DesiredDrainAnnotation) == protocol.UncordonRequest(desired) && e.annotation(protocol.LastAppliedDrainAnnotation) != e.annotation(protocol.DesiredDrainAnnotation):
		x.Summary = fmt.Sprintf("finishing its update to %s in %s: uncordoning", desired, in)
		x.Doing = "the agent asked the drain controller to uncordon the node"
		x.Next = "the drain controller uncordons it and the node is Ready and Done"
	case !rollout.Done(n):
		// On its desired config but not Done: the agent reports Working after a first boot, or
		// once a stuck journal is cleared, until it has verified what booted and what is on disk.
		x.Summary = fmt.Sprintf("verifying %s in %s: the agent has not reported Done", current, in)
		x.Doing = fmt.Sprintf("the agent is checking that the node runs %s (what booted, what is on disk) before it reports Done", current)
		x.Next = fmt.Sprintf("the agent reports Done once the node matches %s; until then %s counts the node unavailable", current, in)
		x.YouCan = []string{"if this lasts, check the node's agent: `journalctl -u mco-daemon` on it"}
	case target != "" && desired != target && rollout.Held(n):
		e.held(x, current, target, in)
		return
	case target != "" && desired != target:
		e.waiting(x, current, target, in)
	default:
		x.Summary = fmt.Sprintf("Done: runs %s, the target of %s", current, in)
		x.Doing = "nothing: the node runs its pool's target config"
		x.Next = "nothing until the pool gets a new target (a MachineConfig of the pool changes)"
		if n.Spec.Unschedulable {
			x.Why = append(x.Why, "the node is cordoned, but not by mco's drain for an update: someone cordoned it")
			x.YouCan = append(x.YouCan, fmt.Sprintf("`kubectl uncordon %s` when that is done", n.Name))
		}
		if !rollout.Healthy(n) {
			x.Why = append(x.Why, "the node is not Ready (or reports pressure), but not because of mco: it is not updating; it counts as unavailable in its pool")
			x.YouCan = append(x.YouCan, fmt.Sprintf("look at the kubelet: `kubectl describe node %s`, `journalctl -u kubelet` on it", n.Name))
		}
	}
	e.stalled(x)
	if rollout.Held(n) {
		e.heldAside(x)
	}
}

// stalled adds, for a node stalled on its update (rollout.StallOf, as its pool's UpdateStalled
// reports it), when it was given its target and where to look: the pool has nothing else to
// say about it.
func (e nodeExplainer) stalled(x *Explanation) {
	s, ok, _ := rollout.StallOf(e.n, e.c.stallThreshold(), e.c.Now)
	if !ok {
		return
	}
	x.Why = append(x.Why, fmt.Sprintf("stalled: it was given %s at %s (%s ago, past the %s stall threshold) and has not finished moving to it; mcp/%s names such a node in its UpdateStalled condition",
		s.Config, stamp(s.Since), age(e.c.Now.Sub(s.Since)), e.c.stallThreshold(), e.pool.Name))
	x.YouCan = append(x.YouCan, fmt.Sprintf("check the node's agent: `kubectl -n openshift-machine-config-operator get pods -o wide --field-selector spec.nodeName=%s`, then that pod's log", e.n.Name))
}

// drain explains a drain the agent asked for that the drain controller has not acknowledged:
// the pods and budgets in its way, from the drain controller's blocked report once it wrote one
// and from the live pods and budgets (Cluster.NodePods) from the start, each named once.
func (e nodeExplainer) drain(x *Explanation, desired, in string) {
	now := e.c.Now
	x.Summary = fmt.Sprintf("draining for %s in %s", desired, in)
	x.Doing = fmt.Sprintf("draining: the node is cordoned and its pods are being evicted, before %s is applied", desired)
	if started, err := time.Parse(time.RFC3339, e.annotation(protocol.DrainStartedAtAnnotation)); err == nil {
		x.Doing += fmt.Sprintf(" (since %s, %s)", stamp(started), age(now.Sub(started)))
	}
	live := e.c.NodePods.Node == e.n.Name && e.c.NodePods.Unread == ""
	var waits []drainWait
	if live {
		waits = drainWaits(e.c.NodePods.Pods, e.c.NodePods.Budgets)
	}
	report := e.annotation(protocol.DrainBlockedAnnotation)
	var budgets, pods []string
	if report == "" {
		x.Next = "once every pod is evicted the drain controller acknowledges the drain and the agent applies the config; past the drain controller's threshold (--drain-blocked-threshold, 10m by default) it also reports the drain as DrainBlocked on the node and its pool"
		if live && len(waits) == 0 {
			x.Why = []string{"no pod the drain evicts is left on the node: the drain controller acknowledges the drain at its next pass"}
		}
		if len(waits) > 0 && waits[0].refused {
			x.Summary += ": held by PodDisruptionBudget"
			if len(waits[0].refusal.Budgets) > 1 {
				x.Summary += "s"
			}
			x.Summary += " " + strings.Join(waits[0].budgets(), ", ")
		}
	} else {
		x.Summary = fmt.Sprintf("drain blocked for %s in %s", desired, in)
		x.Why = []string{"the drain is blocked: " + bound(report)}
		x.Next = "the drain controller retries each eviction (at most a minute apart) and the node stays cordoned; the agent applies the config once the last pod is gone"
		budgets, pods = blockers(report)
	}
	// The live pods the report does not name already, and what is in their way.
	reported := slices.Clone(pods)
	var several []drainWait
	var lines []string
	for _, w := range waits {
		if slices.Contains(reported, w.key()) {
			continue
		}
		lines = append(lines, w.line(now))
		if !w.refused {
			continue
		}
		if w.refusal.Reason == eviction.SeveralBudgets {
			several = append(several, w)
		} else {
			budgets = appendNew(budgets, w.budgets()...)
		}
		pods = appendNew(pods, w.key())
	}
	if extra := len(lines) - maxDrainPods; extra > 0 {
		lines = append(lines[:maxDrainPods], fmt.Sprintf("and %d more pods still on the node", extra))
	}
	x.Why = append(x.Why, lines...)
	for _, b := range budgets[:min(len(budgets), 3)] {
		x.YouCan = append(x.YouCan, budgetAdvice(b))
	}
	for _, w := range several[:min(len(several), 3)] {
		x.YouCan = append(x.YouCan, severalBudgetsAdvice(w))
	}
	for _, p := range pods[:min(len(pods), 3)] {
		x.YouCan = append(x.YouCan, deleteAdvice(p))
	}
	if len(x.YouCan) == 0 && (report != "" || len(waits) > 0) {
		x.YouCan = append(x.YouCan, fmt.Sprintf("see the pods left on the node: `kubectl get pods -A --field-selector spec.nodeName=%s`", e.n.Name))
	}
	if step := e.drainStep(); step != "" {
		x.Next = step + "; meanwhile " + x.Next
	}
}

// appendNew appends each of names that list does not hold yet.
func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// waiting explains a Done node that its pool has not yet targeted at its new config.
func (e nodeExplainer) waiting(x *Explanation, current, target, in string) {
	x.Summary = fmt.Sprintf("waiting: runs %s, %s targets %s", current, in, target)
	x.Doing = fmt.Sprintf("nothing yet: the node controller has not given the node %s", target)
	hs := holds(e.c, e.pool)
	for _, h := range hs {
		x.Why = append(x.Why, h.Why)
		x.YouCan = append(x.YouCan, h.YouCan...)
	}
	if len(hs) > 0 {
		x.Summary = fmt.Sprintf("waiting: %s holds its update to %s", in, target)
		x.Next = hs[0].Next
		return
	}
	x.Why = append(x.Why, statusview.PoolPacing(e.c.Policies, e.pool).Lines(e.c.Now)...)
	x.Next = "the node controller gives it the target as soon as the pool has room (maxUnavailable, pacing); nodes start in a stable order"
	if step := e.drainStep(); step != "" {
		x.Summary = fmt.Sprintf("waiting: its drain for %s was skipped; runs %s", target, current)
		x.Why = append(x.Why, step)
		x.Next = "the node controller gives it the target again once no other node of the pool waits for one (maxUnavailable, pacing); the drain's blocked time counts on towards spec.drain.deleteBlockingPodsAfter, where set"
	}
}
