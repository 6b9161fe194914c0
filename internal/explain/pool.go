package explain

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/statusview"
)

// Pool explains what mco is doing with the MachineConfigPool called name.
func Pool(c Cluster, name string) (Explanation, error) {
	pool := c.pool(name)
	if pool == nil {
		return Explanation{}, &NotFoundError{Kind: "machineconfigpool", Name: name}
	}
	x := Explanation{Object: "mcp/" + name}
	target := pool.Spec.Configuration.Name
	members := c.members(pool)
	byPhase := map[statusview.Phase][]string{}
	var degraded []*corev1.Node
	for _, n := range members {
		ph := statusview.NodePhase(n, target)
		byPhase[ph] = append(byPhase[ph], n.Name)
		if rollout.Degraded(n) {
			degraded = append(degraded, n)
		}
	}
	for _, names := range byPhase {
		slices.Sort(names)
	}
	done := len(byPhase[statusview.PhaseDone])
	hs := holds(c, pool)

	state := "Updating"
	switch {
	case target == "":
		state = "not rendered yet"
	case poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolDegraded) || len(degraded) > 0:
		state = "Degraded"
	case pool.Spec.Paused && done < len(members):
		state = "Paused"
	case done == len(members):
		state = "Updated"
	case done+len(byPhase[statusview.PhaseHeld]) == len(members):
		state = "Waiting for held nodes"
	}
	rb := rolledBack(pool)
	x.Summary = fmt.Sprintf("%s: %d of %d nodes run %s", state, done, len(members), orNone(target))
	if rb != nil {
		x.Summary += "; " + rb.Summary
	}
	if len(hs) > 0 {
		x.Summary += "; held: " + firstClause(hs[0].Why)
	}
	x.Doing = doing(byPhase, target)

	for _, n := range sortedByName(degraded)[:min(len(degraded), maxNamedNodes)] {
		p := diagnose(n, eventsAbout(c.Events, "Node", n.Name))
		x.Why = append(x.Why, bound(fmt.Sprintf("node %s is %s (%s): %s", n.Name, n.Annotations[protocol.StateAnnotation], p.Kind, p.Why)))
		x.YouCan = appendOnce(x.YouCan, fmt.Sprintf("`mco explain node/%s` for what to do about it", n.Name))
	}
	if extra := len(degraded) - maxNamedNodes; extra > 0 {
		x.Why = append(x.Why, fmt.Sprintf("and %d more degraded nodes", extra))
	}
	if cond := poolcondition.Get(&pool.Status, poolcondition.DrainBlocked); cond != nil && cond.Status == corev1.ConditionTrue {
		x.Why = append(x.Why, bound("drains are blocked (DrainBlocked): "+cond.Message))
		var blocked []string
		for _, n := range members {
			if n.Annotations[protocol.DrainBlockedAnnotation] != "" {
				blocked = append(blocked, n.Name)
			}
		}
		slices.Sort(blocked)
		for _, name := range blocked[:min(len(blocked), 3)] {
			x.YouCan = appendOnce(x.YouCan, fmt.Sprintf("`mco explain node/%s` names the budgets and pods blocking its drain and what to do", name))
		}
	}
	x.Why = append(x.Why, drainStepLines(c, pool, members)...)
	if cond := poolcondition.Get(&pool.Status, poolcondition.NodesAwaitingAdoption); cond != nil && cond.Status == corev1.ConditionTrue {
		x.Why = append(x.Why, bound("nodes mco did not boot wait for adoption (NodesAwaitingAdoption, not counted in the pool): "+cond.Message))
		x.YouCan = appendOnce(x.YouCan, fmt.Sprintf("approve them all: `mco adopt --pool %s`, or one: `mco adopt NODE`; `mco plan --pool %s` shows what each adoption writes", name, name))
	}
	if rb != nil {
		x.Why = append(x.Why, rb.Why)
		x.YouCan = append(x.YouCan, rb.YouCan...)
	}
	if heldNodes := byPhase[statusview.PhaseHeld]; len(heldNodes) > 0 {
		x.Why = append(x.Why, fmt.Sprintf("%s held back by an admin (`mco hold`), so mcp/%s is not Updated; it waits for %s", count(len(heldNodes), "node is", "nodes are"), name, nameNodes(heldNodes)))
		args := "NODE..."
		if len(heldNodes) <= maxNamedNodes {
			args = strings.Join(heldNodes, " ")
		}
		x.YouCan = appendOnce(x.YouCan, fmt.Sprintf("release them: `mco hold --undo %s`", args))
	}
	for _, h := range hs {
		x.Why = append(x.Why, h.Why)
		for _, y := range h.YouCan {
			x.YouCan = appendOnce(x.YouCan, y)
		}
	}
	switch {
	case len(hs) > 0:
		x.Next = hs[0].Next
	case target == "":
		x.Next = "the render controller renders the pool's MachineConfigs and sets its target"
	case rb != nil && done == len(members):
		x.Next = rb.Next
	case done == len(members):
		x.Next = "nothing until the pool gets a new target (a MachineConfig of the pool changes)"
	case done+len(byPhase[statusview.PhaseHeld]) == len(members):
		x.Next = "nothing until the held nodes are released; then they are updated like any waiting node"
	default:
		x.Next = "the node controller starts waiting nodes as the nodes updating now finish (maxUnavailable, pacing)"
		x.Why = append(x.Why, statusview.PoolPacing(c.Policies, pool).Lines(c.Now)...)
	}
	x.Evidence = append(x.Evidence, fmt.Sprintf("mcp/%s: target %s, status.configuration %s, machines %d, updated %d, ready %d, unavailable %d, degraded %d, paused %t",
		name, orNone(target), orNone(pool.Status.Configuration.Name), pool.Status.MachineCount, pool.Status.UpdatedMachineCount,
		pool.Status.ReadyMachineCount, pool.Status.UnavailableMachineCount, pool.Status.DegradedMachineCount, pool.Spec.Paused))
	x.Evidence = append(x.Evidence, poolConditionEvidence(pool)...)
	for _, key := range []string{rolloutv1.RollbackAnnotation, rolloutv1.PreviousConfigurationAnnotation} {
		if v, ok := pool.Annotations[key]; ok {
			x.Evidence = append(x.Evidence, bound(fmt.Sprintf("mcp/%s annotation %s=%s", name, key, v)))
		}
	}
	if p := statusview.PoolPacing(c.Policies, pool); p.Policy != "" && p.Decided {
		s := p.Status
		line := fmt.Sprintf("mcprollout/%s pool %s: phase %s, batch %d, done %d, remaining %d, target %s",
			p.Policy, name, s.Phase, s.Batch, s.NodesDone, s.NodesRemaining, orNone(s.Target))
		if s.Reason != "" {
			line += ", reason " + s.Reason
		}
		x.Evidence = append(x.Evidence, bound(line))
	}
	x.Evidence = append(x.Evidence, eventEvidence(eventsAbout(c.Events, "MachineConfigPool", name), c.Now)...)
	return x, nil
}

// phaseOrder is how doing lists nodes: furthest along first, waiting last.
var phaseOrder = []statusview.Phase{
	statusview.PhaseDegraded, statusview.PhaseRebooting, statusview.PhaseApplying, statusview.PhaseCordoned,
	statusview.PhaseDraining, statusview.PhaseQueued, statusview.PhaseWaiting, statusview.PhaseHeld,
}

// doing says which nodes are at which step, naming a few per step.
func doing(byPhase map[statusview.Phase][]string, target string) string {
	var parts []string
	for _, ph := range phaseOrder {
		if names := byPhase[ph]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", ph, nameNodes(names)))
		}
	}
	if len(parts) == 0 {
		return "nothing: every node runs " + orNone(target)
	}
	return strings.Join(parts, "; ")
}

func sortedByName(nodes []*corev1.Node) []*corev1.Node {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// firstClause is the part of a reason before its first colon: "paced by mcprollout/workers".
func firstClause(s string) string {
	if before, _, ok := strings.Cut(s, ": "); ok {
		return before
	}
	return s
}
