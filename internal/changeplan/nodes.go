package changeplan

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// NodeGroup is the nodes of a pool that run the same rendered config, and what the change does
// to them.
type NodeGroup struct {
	// Current is the rendered config the nodes run (their currentConfig annotation).
	Current string `json:"current"`
	Nodes   []Node `json:"nodes"`
	// Plan is the move from Current to the pool's new rendered config; nil with Error, and
	// for Adopting.
	Plan  *Plan  `json:"plan,omitempty"`
	Error string `json:"error,omitempty"`
	// Adopting: Current is "": nodes mco did not boot whose adoption started; they run no
	// rendered config to plan from, and their agents update them as their adoption plans said.
	Adopting bool `json:"adopting,omitempty"`
}

// Node is one member of a group, with what its own state adds to the plan.
type Node struct {
	Name string `json:"name"`
	// Moving: the node is between configs (desired differs from current, or the agent is not
	// Done), so it is already being changed, and may be drained or rebooted, whatever the plan.
	Moving bool `json:"moving,omitempty"`
	// RebootPending: the agent has a reboot queued (post-config-action Rebooting); the node
	// reboots whatever the plan says.
	RebootPending bool `json:"rebootPending,omitempty"`
	// Held: an admin holds the node back (`mco hold`): the node controller does not give it
	// the pool's new config until it is released, so the plan applies to it only then.
	Held  bool     `json:"held,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// GroupNodes groups a pool's members by their current config, groups by config name and nodes
// by name, flagging the nodes whose own state overrides the plan.
func GroupNodes(members []*corev1.Node) []NodeGroup {
	byConfig := map[string]*NodeGroup{}
	for _, n := range members {
		current := n.Annotations[protocol.CurrentConfigAnnotation]
		g := byConfig[current]
		if g == nil {
			g = &NodeGroup{Current: current}
			byConfig[current] = g
		}
		g.Nodes = append(g.Nodes, nodeOf(n))
	}
	out := make([]NodeGroup, 0, len(byConfig))
	for _, g := range byConfig {
		slices.SortFunc(g.Nodes, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b NodeGroup) int { return cmp.Compare(a.Current, b.Current) })
	return out
}

func nodeOf(n *corev1.Node) Node {
	a := n.Annotations
	out := Node{Name: n.Name}
	if a[protocol.PostConfigActionAnnotation] == protocol.PostConfigActionRebooting {
		out.RebootPending = true
		out.Notes = append(out.Notes, "reboot pending: the agent has queued a reboot, which happens whatever this plan says")
	}
	state := a[protocol.StateAnnotation]
	if !rollout.Done(n) && a[protocol.CurrentConfigAnnotation] == "" {
		out.Moving = true
		out.Notes = append(out.Notes, fmt.Sprintf("being adopted: mco did not boot it; its agent moves it from the host's own files to %s as its adoption plan said, then moves on to the pool's next config like any node",
			orNone(a[protocol.DesiredConfigAnnotation])))
	} else if !rollout.Done(n) {
		out.Moving = true
		note := fmt.Sprintf("mid-update: moving from %s to %s", orNone(a[protocol.CurrentConfigAnnotation]), orNone(a[protocol.DesiredConfigAnnotation]))
		if state != "" {
			note += ", state " + state
		}
		out.Notes = append(out.Notes, note+"; it may already be drained or rebooted for that move, and the plan is from its current config")
	}
	if rollout.Held(n) {
		out.Held = true
		note := fmt.Sprintf("held (`mco hold`): not updated until released with `mco hold --undo %s`", n.Name)
		if out.Moving {
			note += "; the update in progress finishes first"
		}
		out.Notes = append(out.Notes, note)
	}
	if p := a[rolloutv1.UpdatePriorityAnnotation]; p != "" {
		out.Notes = append(out.Notes, fmt.Sprintf("update priority %s (counted as %d): nodes with a higher one are updated first", p, rollout.Priority(n)))
	}
	if rollout.Degraded(n) && a[protocol.ReasonAnnotation] != "" {
		out.Notes = append(out.Notes, "agent reports: "+a[protocol.ReasonAnnotation])
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
