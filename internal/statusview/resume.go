package statusview

import (
	"fmt"
	"strings"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// ResumePlan is what `mco rollout resume` does: whether to set rolloutv1.ResumeAnnotation on
// the policy, and what to print once it is set.
type ResumePlan struct {
	Set   bool
	Lines []string
}

// PlanResume decides `mco rollout resume` for policy, from its status. pool is the pool the
// admin named (mcp/POOL), "" when they named the policy (mcprollout/NAME).
//
// The marker ends the hold of every pool of the policy whose batch finished before it (the
// canary's approval wait, a soak) and is spent for a batch that finishes later (pacing.Decide).
// So setting it while the pool holds nothing would do nothing: that is an error naming what
// the pool does instead, unless force. Naming a pool that holds nothing while another pool of
// the policy holds is refused too: the marker would release that other pool.
func PlanResume(policy *rolloutv1.MachineConfigPoolRollout, pool string, force bool) (ResumePlan, error) {
	ref := "mcprollout/" + policy.Name
	var held, waiting []rolloutv1.PoolRolloutStatus
	named := pool == ""
	for _, s := range policy.Status.Pools {
		switch {
		case Held(policy.Spec, s):
			held = append(held, s)
			named = named || s.Name == pool
		case pool == "" || s.Name == pool:
			waiting = append(waiting, s)
		}
	}
	if !named || len(held) == 0 {
		var why []string
		for _, s := range waiting {
			why = append(why, fmt.Sprintf("pool %s is %s", s.Name, describePhase(s)))
		}
		switch {
		case pool != "" && len(waiting) == 0:
			why = append(why, fmt.Sprintf("%s has no decision for pool %s yet", ref, pool))
		case len(why) == 0:
			why = append(why, ref+" has no decision for any pool yet")
		}
		notNow := "no hold to release now: " + strings.Join(why, "; ")
		if !force {
			hint := "; a resume ends a canary or soak hold once the batch finished, and one given before is spent (--force sets it anyway)"
			if len(held) > 0 {
				hint = fmt.Sprintf("; %s also holds %s, which this resume would release: run `mco rollout resume %s` for that",
					ref, poolNames(held), ref)
			}
			return ResumePlan{}, fmt.Errorf("%s%s", notNow, hint)
		}
		plan := ResumePlan{Set: true, Lines: []string{fmt.Sprintf(
			"resumed %s (--force): %s; the marker only ends the hold of a batch that finished before it", ref, notNow)}}
		return plan.released(ref, held), nil
	}
	return ResumePlan{Set: true}.released(ref, held), nil
}

func (plan ResumePlan) released(ref string, held []rolloutv1.PoolRolloutStatus) ResumePlan {
	for _, s := range held {
		plan.Lines = append(plan.Lines, fmt.Sprintf("resumed %s: pool %s was %s", ref, s.Name, describePhase(s)))
	}
	return plan
}

func poolNames(ss []rolloutv1.PoolRolloutStatus) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	if len(names) == 1 {
		return "pool " + names[0]
	}
	return "pools " + strings.Join(names, ", ")
}
