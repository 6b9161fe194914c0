package statusview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// PoolRow is one line of the pools table.
type PoolRow struct {
	Name, Target, Current                           string
	Machines, Updated, Ready, Unavailable, Degraded int32
	Paused                                          bool
	// Pacing is the phase of the MachineConfigPoolRollout that selects the pool (Pacing.Column).
	Pacing string
	// Conditions lists the conditions that are True, e.g. "Updated" or "Degraded: <message>".
	Conditions []string
}

// NodeRow is one line of the nodes table.
type NodeRow struct {
	Name, Pool, Current, Desired, State, Reason string
	Phase                                       Phase
	// Held: an admin holds the node back (`mco hold`); shown beside a phase that is not held.
	Held bool
	// Priority is the node's update-priority annotation as written, "" when unset.
	Priority string
}

// PhaseColumn is the phase with what orders the node: its hold, when the phase does not say it
// already, and its update priority.
func (r NodeRow) PhaseColumn() string {
	out := string(r.Phase)
	if r.Held && r.Phase != PhaseHeld {
		out = strings.TrimPrefix(out+", held", ", ")
	}
	if r.Priority != "" {
		out = strings.TrimPrefix(out+", priority "+r.Priority, ", ")
	}
	return out
}

// Pools summarises each pool's status and its pacing by policies, sorted by name.
func Pools(pools []mcfgv1.MachineConfigPool, policies []rolloutv1.MachineConfigPoolRollout) []PoolRow {
	rows := make([]PoolRow, 0, len(pools))
	for _, p := range pools {
		st := p.Status
		row := PoolRow{
			Name: p.Name, Target: p.Spec.Configuration.Name, Current: st.Configuration.Name, Paused: p.Spec.Paused,
			Pacing:   PoolPacing(policies, &p).Column(),
			Machines: st.MachineCount, Updated: st.UpdatedMachineCount, Ready: st.ReadyMachineCount,
			Unavailable: st.UnavailableMachineCount, Degraded: st.DegradedMachineCount,
		}
		for _, c := range st.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			if c.Message != "" && c.Type != mcfgv1.MachineConfigPoolUpdated {
				row.Conditions = append(row.Conditions, fmt.Sprintf("%s: %s", c.Type, c.Message))
			} else {
				row.Conditions = append(row.Conditions, string(c.Type))
			}
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b PoolRow) int { return cmp.Compare(a.Name, b.Name) })
	return rows
}

// Nodes lists every node with the pool it belongs to (the same rule the node controller uses)
// and its phase towards that pool's target, sorted by pool then name.
func Nodes(pools []mcfgv1.MachineConfigPool, nodes []corev1.Node) []NodeRow {
	poolPtrs := make([]*mcfgv1.MachineConfigPool, len(pools))
	byName := map[string]*mcfgv1.MachineConfigPool{}
	for i := range pools {
		poolPtrs[i] = &pools[i]
		byName[pools[i].Name] = &pools[i]
	}
	parsed := rollout.NewPools(poolPtrs)
	rows := make([]NodeRow, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		a := n.Annotations
		pool, err := parsed.PrimaryPool(n)
		if err != nil {
			pool = "(" + err.Error() + ")"
		}
		row := NodeRow{
			Name: n.Name, Pool: pool, Current: a[protocol.CurrentConfigAnnotation], Desired: a[protocol.DesiredConfigAnnotation],
			State: a[protocol.StateAnnotation], Reason: firstLine(a[protocol.ReasonAnnotation]),
			Held: rollout.Held(n), Priority: a[rolloutv1.UpdatePriorityAnnotation],
		}
		if pool == "" && row.Reason == "" {
			// Unmanaged nodes are the ones an admin misses most (a kubeadm node has no role
			// label for the built-in pools): say which label each pool wants.
			row.Reason = "in no pool: " + strings.Join(rollout.NoPool(n, poolPtrs), "; ")
		}
		if p, ok := byName[pool]; ok {
			row.Phase = NodePhase(n, p.Spec.Configuration.Name)
			if row.Phase == PhaseHeld && row.Reason == "" {
				row.Reason = fmt.Sprintf("held back by an admin; `mco hold --undo %s` releases it", n.Name)
			}
			if a, awaiting := rollout.AwaitingAdoption(n, p); awaiting && row.Reason == "" {
				row.Reason = adoptionReason(a)
			}
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b NodeRow) int { return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Name, b.Name)) })
	return rows
}

// adoptionReason is what a node waiting for adoption waits for, and what adopting it does.
func adoptionReason(a rollout.Awaiting) string {
	switch {
	case a.Refused:
		return a.Plan.Summary()
	case a.Approved:
		return "approved, waiting for room in its pool: " + a.Plan.Summary()
	}
	return fmt.Sprintf("%s; approve with `mco adopt %s`", a.Plan.Summary(), a.Node)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
