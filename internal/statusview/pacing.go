package statusview

import (
	"errors"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/pacing"
)

// PolicyFor is the policy that paces pool, by the controller's rule (pacing.Selecting): nil
// when none selects it, an error naming them when several do (the controller then holds the pool).
func PolicyFor(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) (*rolloutv1.MachineConfigPoolRollout, error) {
	switch selecting := pacing.Selecting(policies, pool); len(selecting) {
	case 0:
		return nil, nil
	case 1:
		return selecting[0], nil
	default:
		return nil, &ConflictError{Policies: len(selecting), reason: pacing.ConflictReason(pool.Name, selecting)}
	}
}

// ConflictError is a pool several policies select.
type ConflictError struct {
	Policies int
	reason   string
}

func (e *ConflictError) Error() string { return e.reason }

// Pacing is how a MachineConfigPoolRollout paces one pool, as the policy's status last said.
type Pacing struct {
	Pool string
	// Policy is the name of the policy that selects the pool; "" when none does.
	Policy string
	// Conflict is set instead of Policy when several policies select the pool.
	Conflict *ConflictError
	// Decided is whether the policy's status has an entry for the pool yet; Status is that entry.
	Decided bool
	Status  rolloutv1.PoolRolloutStatus
	// Spec is the policy's spec; PoolPaused the pool's own spec.paused.
	Spec       rolloutv1.MachineConfigPoolRolloutSpec
	PoolPaused bool
}

// PoolPacing reads how policies pace pool.
func PoolPacing(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) Pacing {
	p := Pacing{Pool: pool.Name, PoolPaused: pool.Spec.Paused}
	policy, err := PolicyFor(policies, pool)
	if errors.As(err, &p.Conflict) || policy == nil {
		return p
	}
	p.Policy, p.Spec = policy.Name, policy.Spec
	if e := pacing.PoolEntry(&policy.Status, pool.Name); e != nil {
		p.Status, p.Decided = *e, true
	}
	return p
}

// Held reports whether the pool waits on a hold `mco rollout resume` ends: a soak, or the
// canary's approval once all its nodes updated. A Canary pool still updating, or still short of
// the canary's size (maxUnavailable let fewer start), holds nothing a resume could end.
func Held(spec rolloutv1.MachineConfigPoolRolloutSpec, s rolloutv1.PoolRolloutStatus) bool {
	switch s.Phase {
	case rolloutv1.PhaseSoaking:
		return true
	case rolloutv1.PhaseCanary:
		return s.BatchFinishedAt != nil && spec.Canary != nil && int(s.NodesDone) >= pacing.CanarySize(spec.Canary.Nodes, int(s.NodesDone+s.NodesRemaining))
	}
	return false
}

// Column is the pools table's PACING cell: the phase, "-" when no policy selects the pool.
func (p Pacing) Column() string {
	switch {
	case p.Conflict != nil:
		return fmt.Sprintf("conflict (%d policies)", p.Conflict.Policies)
	case p.Policy == "":
		return "-"
	case !p.Decided || p.Status.Phase == "":
		return "undecided"
	}
	return string(p.Status.Phase)
}

// Lines are the header lines of `mco rollout status`: which policy paces the pool, its phase
// and reason, and when the next batch starts while the policy holds the pool, so a held pool
// does not look stuck. None when no policy selects the pool.
func (p Pacing) Lines(now time.Time) []string {
	switch {
	case p.Conflict != nil:
		return []string{"not paced: " + p.Conflict.Error()}
	case p.Policy == "":
		return nil
	case !p.Decided:
		return []string{fmt.Sprintf("paced by mcprollout/%s: no decision for pool %s yet", p.Policy, p.Pool)}
	}
	lines := []string{fmt.Sprintf("paced by mcprollout/%s: %s", p.Policy, describePhase(p.Status))}
	if next := p.NextBatch(now); next != "" {
		lines = append(lines, "next batch: "+next)
	}
	return lines
}

// NextBatch says when the next batch starts while the policy holds the pool; "" when it does not hold it.
func (p Pacing) NextBatch(now time.Time) string {
	s, soak := p.Status, p.Spec.Soak.Duration
	resume := fmt.Sprintf("`mco rollout resume mcp/%s`", p.Pool)
	held := Held(p.Spec, s)
	switch {
	case held && soak == 0:
		return "on " + resume
	case held && s.BatchFinishedAt != nil:
		end := s.BatchFinishedAt.Add(soak)
		if !end.After(now) {
			return fmt.Sprintf("now: the soak ended at %s", clock(end, now))
		}
		return fmt.Sprintf("at %s (in %s) when the soak ends, or on %s", clock(end, now), pacing.HumanDuration(end.Sub(now)), resume)
	case s.Phase == rolloutv1.PhaseWaitingForWindow && s.NextWindowStart != nil:
		return fmt.Sprintf("at %s (in %s) when the maintenance window opens", clock(s.NextWindowStart.Time, now), pacing.HumanDuration(s.NextWindowStart.Sub(now)))
	case s.Phase == rolloutv1.PhasePaused && p.Spec.Paused:
		return fmt.Sprintf("none until mcprollout/%s's spec.paused is false", p.Policy)
	case s.Phase == rolloutv1.PhasePaused && p.PoolPaused:
		return fmt.Sprintf("none until mcp/%s's spec.paused is false", p.Pool)
	case s.Phase == rolloutv1.PhasePaused:
		return "none until the cause above is resolved"
	}
	return ""
}

func describePhase(s rolloutv1.PoolRolloutStatus) string {
	if s.Reason == "" {
		return string(s.Phase)
	}
	return fmt.Sprintf("%s (%s)", s.Phase, s.Reason)
}

// clock is a time within the coming week as the reader's clock shows it: "Sat 02:00 CET".
func clock(t, now time.Time) string {
	return t.In(now.Location()).Format("Mon 15:04 MST")
}
