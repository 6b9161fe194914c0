package pacing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Progress is where one node stands against the pool's target.
type Progress string

const (
	Pending  Progress = "Pending"  // not yet pointed at the target
	Updating Progress = "Updating" // pointed at the target, not there yet
	Updated  Progress = "Updated"  // on the target
)

// NodeState is one pool node as the controller saw it.
type NodeState struct {
	Name     string
	Progress Progress
	// NotReady is true when the node's Ready condition is not True, since NotReadySince (zero when unknown).
	NotReady      bool
	NotReadySince time.Time
	// UnreadyDaemonSetPods are the node's DaemonSet pods that are not Ready, as namespace/name.
	UnreadyDaemonSetPods []string
}

// State is what the pool and the policy object say now.
type State struct {
	Nodes []NodeState
	// Batch is the number of batches started for the current target (status.batch).
	Batch int
	// BatchFinishedAt is when the controller first saw every started node updated
	// (status.pools[].batchFinishedAt); zero while a batch runs or before the first.
	BatchFinishedAt time.Time
	// ResumedAt is the explicit resume marker (rolloutv1.ResumeAnnotation); zero when none.
	ResumedAt time.Time
	// PoolPaused is the MachineConfigPool's own spec.paused: nothing starts whatever the policy says.
	PoolPaused bool
}

// Record is the batch and finish time to write to status once the node controller knows how
// many of d.Start it started: a batch counts only when one of its nodes starts, so a start
// held back by maxUnavailable or an unresponsive node neither counts a batch nor restarts
// the soak.
func Record(s State, d Decision, started int) (batch int, finishedAt time.Time) {
	if started > 0 {
		return d.Batch, time.Time{}
	}
	return s.Batch, d.BatchFinishedAt
}

// Decision is what the controller should do and report.
type Decision struct {
	// Start is how many more nodes may start now; the node controller caps it by maxUnavailable.
	// Nodes already updating are never counted here and never held back.
	Start int
	// Batch is the status.batch to record (before any node is started, so a restart cannot
	// count a batch twice).
	Batch int
	// BatchFinishedAt is when the last batch was seen finished: s.BatchFinishedAt, or now when
	// this decision is the first to see it; zero while a batch runs. Record says what to write.
	BatchFinishedAt time.Time
	Phase           rolloutv1.Phase
	Reason          string
	// RequeueAfter, when not 0, is when to decide again even if nothing changes (a soak ends,
	// a window opens or closes). Node and pod changes wake the controller anyway.
	RequeueAfter time.Duration
	// NextWindowStart is set while waiting for a window.
	NextWindowStart           time.Time
	NodesDone, NodesRemaining int
	// GateFailed is why the health gate fails on an updated node ("" when it passes), for
	// spec.onFailure: Rollback.
	GateFailed string
	// Held is true when the policy itself keeps nodes from starting (a hold, a closed window,
	// the gate, a pause), not when it only waits for started nodes to finish: a stall while
	// nodes update is not explained by the policy (mco_pool_held).
	Held bool
}

// Decide paces a pool. Order: nothing to do (Idle, Done); a paused spec or a failed health
// gate stops new starts; the canary batch, then its hold until `mco rollout resume` or the
// soak; with a soak, one batch at a time with the soak between; finally, new starts only
// inside a maintenance window.
func Decide(p Policy, s State, now time.Time) Decision {
	var updated, updating, pending int
	for _, n := range s.Nodes {
		switch n.Progress {
		case Updated:
			updated++
		case Updating:
			updating++
		default:
			pending++
		}
	}
	// The soak counts from when the batch was first seen finished; a restart keeps that time
	// because it is recorded in status.
	lastFinish := s.BatchFinishedAt
	if updating > 0 || updated == 0 {
		lastFinish = time.Time{}
	} else if lastFinish.IsZero() {
		lastFinish = now
	}
	d := Decision{Batch: s.Batch, BatchFinishedAt: lastFinish, NodesDone: updated, NodesRemaining: updating + pending}
	total := len(s.Nodes)
	stillUpdating := ""
	if updating > 0 {
		stillUpdating = fmt.Sprintf("; %s still updating", nodes(updating))
	}
	switch {
	case total == 0:
		d.Phase, d.Reason = rolloutv1.PhaseIdle, "pool has no nodes"
		return d
	case pending == 0 && updating == 0:
		d.Phase, d.Reason = rolloutv1.PhaseDone, fmt.Sprintf("all %s updated", nodes(total))
		return d
	}
	if why := p.unhealthy(s.Nodes, now.Location()); why != "" {
		d.Phase, d.Reason, d.Held, d.GateFailed = rolloutv1.PhasePaused, "paused: "+why+stillUpdating, true, why
		return d
	}
	if p.Paused {
		d.Phase, d.Reason, d.Held = rolloutv1.PhasePaused, "paused by spec.paused"+stillUpdating, true
		return d
	}
	if s.PoolPaused {
		d.Phase, d.Reason, d.Held = rolloutv1.PhasePaused, "the MachineConfigPool is paused (its spec.paused)"+stillUpdating, true
		return d
	}
	resumed := !s.ResumedAt.IsZero() && !s.ResumedAt.Before(lastFinish)
	soakLeft := lastFinish.Add(p.Soak).Sub(now)
	want, batch, phase := pending, s.Batch, rolloutv1.PhaseProgressing

	canary := p.canarySize(total)
	switch {
	case canary > 0 && s.Batch <= 1:
		started := updated + updating
		switch {
		case started < canary:
			want, batch, phase = min(canary-started, pending), 1, rolloutv1.PhaseCanary
		case updating > 0:
			d.Phase, d.Reason = rolloutv1.PhaseCanary, fmt.Sprintf("canary: %d/%d updated%s", updated, canary, stillUpdating)
			return d
		case !resumed && p.Soak > 0 && soakLeft > 0:
			d.Phase, d.RequeueAfter, d.Held = rolloutv1.PhaseCanary, soakLeft, true
			d.Reason = fmt.Sprintf("canary done: waiting for `mco rollout resume` or soak (%s left)", HumanDuration(soakLeft))
			return d
		case !resumed && p.Soak == 0:
			d.Phase, d.Reason, d.Held = rolloutv1.PhaseCanary, "canary done: waiting for `mco rollout resume`", true
			return d
		default:
			batch = 2
		}
	case p.Soak > 0:
		switch {
		case updating > 0:
			d.Reason = fmt.Sprintf("batch %d: %s", max(s.Batch, 1), strings.TrimPrefix(stillUpdating, "; "))
			d.Phase = rolloutv1.PhaseProgressing
			return d
		case s.Batch > 0 && !resumed && soakLeft > 0:
			d.Phase, d.RequeueAfter, d.Held = rolloutv1.PhaseSoaking, soakLeft, true
			// Updated nodes passed the health gate above, so the count is of updated nodes.
			d.Reason = fmt.Sprintf("soaking batch %d until %s; %d/%d updated", s.Batch,
				lastFinish.Add(p.Soak).In(now.Location()).Format("15:04"), updated, total)
			return d
		default:
			batch = s.Batch + 1
		}
	default: // no batches: nodes start as maxUnavailable frees slots
		batch = max(s.Batch, 1)
	}

	if len(p.Windows) > 0 {
		until, open := p.Windows.OpenUntil(now)
		if !open {
			next, w, _ := NextWindowStart(p.Windows, now)
			d.Phase, d.NextWindowStart, d.RequeueAfter, d.Held = rolloutv1.PhaseWaitingForWindow, next, next.Sub(now), true
			d.Reason = fmt.Sprintf("waiting for window %s (in %s)%s", w.Describe(next), HumanDuration(next.Sub(now)), stillUpdating)
			return d
		}
		d.RequeueAfter = until.Sub(now)
	}
	d.Start, d.Batch, d.Phase = want, batch, phase
	if phase == rolloutv1.PhaseCanary {
		d.Reason = fmt.Sprintf("canary: starting %s", nodes(want))
	} else {
		d.Reason = fmt.Sprintf("batch %d: up to %s may start", batch, nodes(want))
	}
	d.Reason += stillUpdating
	return d
}

// unhealthy names the first updated node (by name) that fails the health gate, and how many
// more do; "" when all pass.
func (p Policy) unhealthy(ns []NodeState, loc *time.Location) string {
	var failing []string
	for _, n := range ns {
		if n.Progress != Updated {
			continue
		}
		switch {
		case p.GateReady && n.NotReady && n.NotReadySince.IsZero():
			failing = append(failing, fmt.Sprintf("node %s not Ready", n.Name))
		case p.GateReady && n.NotReady:
			failing = append(failing, fmt.Sprintf("node %s not Ready since %s", n.Name, n.NotReadySince.In(loc).Format("15:04")))
		case p.GateDaemonSets && len(n.UnreadyDaemonSetPods) > 0:
			pods := slices.Sorted(slices.Values(n.UnreadyDaemonSetPods))
			failing = append(failing, fmt.Sprintf("node %s DaemonSet pod %s not Ready", n.Name, pods[0]))
		}
	}
	if len(failing) == 0 {
		return ""
	}
	slices.Sort(failing)
	if len(failing) > 1 {
		return fmt.Sprintf("%s (and %d more)", failing[0], len(failing)-1)
	}
	return failing[0]
}

func nodes(n int) string {
	if n == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", n)
}
