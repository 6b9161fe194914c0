package explain

import (
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/statusview"
)

// hold is one reason a pool starts no further node, with what ends it.
type hold struct {
	Why    string
	Next   string
	YouCan []string
}

// holds are the reasons pool starts no more nodes now, most decisive first: a pool that does not
// render, a paused pool, its pacing policy, nodes that failed or did not come back, and the
// maxUnavailable capacity. None when the pool is free to start nodes (or has none to start).
func holds(c Cluster, pool *mcfgv1.MachineConfigPool) []hold {
	var out []hold
	st := &pool.Status
	if cond := poolcondition.Get(st, mcfgv1.MachineConfigPoolRenderDegraded); cond != nil && cond.Status == corev1.ConditionTrue {
		out = append(out, hold{
			Why:  bound(fmt.Sprintf("mcp/%s's MachineConfigs do not render (RenderDegraded): %s", pool.Name, cond.Message)),
			Next: fmt.Sprintf("the pool keeps its last target %s; the render controller renders again as soon as a MachineConfig changes", orNone(pool.Spec.Configuration.Name)),
			YouCan: []string{
				"fix or delete the MachineConfig the message names (`mco validate FILE` checks it offline)",
			},
		})
	}
	if pool.Spec.Paused {
		h := hold{
			Why:    fmt.Sprintf("mcp/%s is paused (spec.paused=true): no node of it starts an update", pool.Name),
			Next:   "nothing until the pool is unpaused",
			YouCan: []string{fmt.Sprintf("unpause it: `kubectl patch mcp %s --type merge -p '{\"spec\":{\"paused\":false}}'`", pool.Name)},
		}
		if cond := poolcondition.Get(st, poolcondition.PendingUpdate); cond != nil && cond.Status == corev1.ConditionTrue {
			h.Why += fmt.Sprintf("; PendingUpdate (%s): %s", cond.Reason, cond.Message)
			h.Next = "nothing until the pool is unpaused; then " + cond.Message
		}
		out = append(out, h)
	}
	if h, ok := pacingHold(c, pool); ok {
		out = append(out, h)
	}
	if cond := poolcondition.Get(st, poolcondition.NodeUnresponsive); cond != nil && cond.Status == corev1.ConditionTrue {
		out = append(out, hold{
			Why:    bound("a node did not come back from its update (NodeUnresponsive): " + cond.Message),
			Next:   "no further node of the pool starts until it is Ready again or its Node is deleted",
			YouCan: []string{"bring the machine back (console, power); if it is gone for good, `kubectl delete node NAME` lets the rollout finish on the rest"},
		})
	}
	if cond := poolcondition.Get(st, poolcondition.UpdateStalled); cond != nil && cond.Status == corev1.ConditionTrue {
		out = append(out, hold{
			Why:    bound("a node stopped moving to its target with nothing else reported (UpdateStalled): " + cond.Message),
			Next:   "the pool waits for it: it holds its maxUnavailable slot until its agent finishes the update",
			YouCan: []string{"`mco explain node/NAME` for the node; check its agent's pod and log (`kubectl -n openshift-machine-config-operator get pods -o wide --field-selector spec.nodeName=NAME`)"},
		})
	}
	if h, ok := capacityHold(c, pool); ok {
		out = append(out, h)
	}
	return out
}

// pacingHold is the hold of the MachineConfigPoolRollout pacing pool, read as `mco rollout
// status` reads it (statusview.PoolPacing), when it holds the pool.
func pacingHold(c Cluster, pool *mcfgv1.MachineConfigPool) (hold, bool) {
	p := statusview.PoolPacing(c.Policies, pool)
	resume := fmt.Sprintf("approve the next batch now: `mco rollout resume mcp/%s`", pool.Name)
	switch {
	case p.Conflict != nil:
		return hold{
			Why:    "two policies select the pool, so the node controller holds it: " + p.Conflict.Error(),
			Next:   "nothing until exactly one MachineConfigPoolRollout selects the pool",
			YouCan: []string{"change one policy's poolSelector (`kubectl get mcprollout`) so only one selects the pool"},
		}, true
	case p.Policy == "" || !p.Decided:
		return hold{}, false
	}
	h := hold{Why: fmt.Sprintf("paced by mcprollout/%s: %s", p.Policy, p.Status.Phase)}
	if p.Status.Reason != "" {
		h.Why += " (" + p.Status.Reason + ")"
	}
	h.Next = p.NextBatch(c.Now)
	switch {
	case statusview.Held(p.Spec, p.Status):
		h.Next = "the next batch starts " + h.Next
		h.YouCan = []string{resume}
	case p.Status.Phase == rolloutv1.PhaseWaitingForWindow:
		h.Next = "the next node starts " + h.Next
		h.YouCan = []string{fmt.Sprintf("wait, or change mcprollout/%s's maintenanceWindows", p.Policy)}
	case p.Status.Phase == rolloutv1.PhasePaused && p.Spec.Paused:
		h.Next = "no batch starts: " + h.Next
		h.YouCan = []string{fmt.Sprintf("`kubectl patch mcprollout %s --type merge -p '{\"spec\":{\"paused\":false}}'`", p.Policy)}
	case p.Status.Phase == rolloutv1.PhasePaused && !p.PoolPaused:
		h.Next = "no batch starts until the health gate passes again (the reason names the node)"
		h.YouCan = []string{"make the node the reason names healthy (Ready, its DaemonSet pods Ready); then the rollout goes on by itself"}
	default:
		return hold{}, false
	}
	return h, true
}

// capacityHold: the pool has healthy nodes waiting for its target and as many nodes unavailable
// as maxUnavailable allows, so none starts until one of those finishes. (An unavailable node
// behind the target costs nothing more; the node controller may retarget it, see rollout.Decide.)
func capacityHold(c Cluster, pool *mcfgv1.MachineConfigPool) (hold, bool) {
	target := pool.Spec.Configuration.Name
	members := c.members(pool)
	var unavailable, waiting []string
	for _, n := range members {
		if rollout.Unavailable(n) {
			unavailable = append(unavailable, n.Name)
		}
		if n.Annotations[protocol.DesiredConfigAnnotation] != target && !rollout.Unavailable(n) && !rollout.Held(n) {
			waiting = append(waiting, n.Name)
		}
	}
	limit, _ := rollout.MaxUnavailable(pool, len(members))
	if target == "" || len(waiting) == 0 || len(unavailable) < limit {
		return hold{}, false
	}
	slices.Sort(unavailable)
	h := hold{
		Why:  fmt.Sprintf("maxUnavailable is %d and %s unavailable (%s)", limit, count(len(unavailable), "node is", "nodes are"), nameNodes(unavailable)),
		Next: fmt.Sprintf("%s as those become Ready and Done", count(len(waiting), "waiting node starts", "waiting nodes start")),
	}
	for _, name := range unavailable[:min(len(unavailable), 3)] {
		h.YouCan = append(h.YouCan, fmt.Sprintf("`mco explain node/%s`", name))
	}
	h.YouCan = append(h.YouCan, fmt.Sprintf("raise mcp/%s's spec.maxUnavailable to let more nodes update at once", pool.Name))
	return h, true
}

// count is "1 node is" or "3 nodes are".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
