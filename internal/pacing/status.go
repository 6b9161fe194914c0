package pacing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Selecting returns the policies whose poolSelector matches the pool's labels, by name. One is
// the pool's policy; several is a conflict the controller refuses (ConflictReason).
func Selecting(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) []*rolloutv1.MachineConfigPoolRollout {
	var out []*rolloutv1.MachineConfigPoolRollout
	for i := range policies {
		p := &policies[i]
		if p.Spec.PoolSelector == nil {
			continue
		}
		// An invalid selector selects nothing; Compile names it in the policy's Valid condition.
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.PoolSelector)
		if err != nil {
			continue
		}
		if sel.Matches(labels.Set(pool.Labels)) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *rolloutv1.MachineConfigPoolRollout) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ConflictReason is the refusal when several policies select one pool: nothing of the pool
// starts until one is changed, since either policy's canary or windows may be the one meant.
func ConflictReason(pool string, policies []*rolloutv1.MachineConfigPoolRollout) string {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = "mcprollout/" + p.Name
	}
	return fmt.Sprintf("pool %s is selected by %s: no node starts until only one selects it", pool, strings.Join(names, " and "))
}

// PoolEntry is the pool's entry in status, nil when there is none.
func PoolEntry(st *rolloutv1.MachineConfigPoolRolloutStatus, pool string) *rolloutv1.PoolRolloutStatus {
	for i := range st.Pools {
		if st.Pools[i].Name == pool {
			return &st.Pools[i]
		}
	}
	return nil
}

// StateFor fills the batch, its finish and the resume marker from the policy for a pool moving
// to target; a new target starts at batch 0.
func StateFor(policy *rolloutv1.MachineConfigPoolRollout, pool, target string, nodes []NodeState, poolPaused bool) State {
	s := State{Nodes: nodes, PoolPaused: poolPaused}
	if e := PoolEntry(&policy.Status, pool); e != nil && e.Target == target {
		s.Batch = int(e.Batch)
		if e.BatchFinishedAt != nil {
			s.BatchFinishedAt = e.BatchFinishedAt.Time
		}
	}
	if v, ok := policy.Annotations[rolloutv1.ResumeAnnotation]; ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			s.ResumedAt = t
		}
	}
	return s
}

// Entry is the status entry for a decision, with the batch and finish Record gives.
func Entry(pool, target string, d Decision, batch int, finishedAt time.Time) rolloutv1.PoolRolloutStatus {
	e := rolloutv1.PoolRolloutStatus{
		Name: pool, Target: target, Phase: d.Phase, Reason: d.Reason, Batch: int32(batch),
		NodesDone: int32(d.NodesDone), NodesRemaining: int32(d.NodesRemaining),
	}
	if !finishedAt.IsZero() {
		e.BatchFinishedAt = &metav1.Time{Time: finishedAt.UTC().Truncate(time.Second)}
	}
	if !d.NextWindowStart.IsZero() {
		e.NextWindowStart = &metav1.Time{Time: d.NextWindowStart.UTC()}
	}
	return e
}

// SetPool puts e into status (replacing the pool's entry, pools sorted by name), drops the
// entries of pools not in keep (when keep is not nil), and recomputes the summary.
func SetPool(st *rolloutv1.MachineConfigPoolRolloutStatus, e *rolloutv1.PoolRolloutStatus, keep func(pool string) bool) {
	pools := slices.DeleteFunc(slices.Clone(st.Pools), func(p rolloutv1.PoolRolloutStatus) bool {
		return (e != nil && p.Name == e.Name) || (keep != nil && !keep(p.Name))
	})
	if e != nil {
		pools = append(pools, *e)
	}
	slices.SortFunc(pools, func(a, b rolloutv1.PoolRolloutStatus) int { return strings.Compare(a.Name, b.Name) })
	st.Pools = pools
	summarize(st)
}

// urgency orders phases for the summary: the pool furthest from Done speaks for the policy.
var urgency = []rolloutv1.Phase{
	rolloutv1.PhasePaused, rolloutv1.PhaseRolledBack, rolloutv1.PhaseWaitingForWindow, rolloutv1.PhaseCanary,
	rolloutv1.PhaseSoaking, rolloutv1.PhaseProgressing, rolloutv1.PhaseDone, rolloutv1.PhaseIdle,
}

func rank(p rolloutv1.Phase) int {
	if i := slices.Index(urgency, p); i >= 0 {
		return i
	}
	return len(urgency)
}

func summarize(st *rolloutv1.MachineConfigPoolRolloutStatus) {
	st.Phase, st.Reason, st.NextWindowStart, st.NodesDone, st.NodesRemaining = "", "", nil, 0, 0
	var lead *rolloutv1.PoolRolloutStatus
	for i := range st.Pools {
		p := &st.Pools[i]
		st.NodesDone += p.NodesDone
		st.NodesRemaining += p.NodesRemaining
		if p.NextWindowStart != nil && (st.NextWindowStart == nil || p.NextWindowStart.Before(st.NextWindowStart)) {
			st.NextWindowStart = p.NextWindowStart.DeepCopy()
		}
		if lead == nil || rank(p.Phase) < rank(lead.Phase) {
			lead = p
		}
	}
	if lead == nil {
		return
	}
	st.Phase = lead.Phase
	st.Reason = "pool " + lead.Name + ": " + lead.Reason
	if len(st.Pools) == 1 {
		st.Reason = lead.Reason
	}
}
