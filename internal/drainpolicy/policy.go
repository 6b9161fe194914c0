package drainpolicy

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Policy is a validated spec.drain.
type Policy struct {
	// BlockedTimeout is how long a drain may stay blocked before OnBlocked acts.
	BlockedTimeout time.Duration
	OnBlocked      rolloutv1.DrainBlockedAction
	// DeleteAfter is the blocked time in all after which refused pods are deleted; 0 never.
	DeleteAfter time.Duration
	// Set is false for a pool without spec.drain: waiting is all that happens, as before.
	Set bool
}

// Default is the policy of a pool with no spec.drain (or no MachineConfigPoolRollout): wait.
func Default() Policy {
	return Policy{BlockedTimeout: rolloutv1.DefaultDrainBlockedTimeout, OnBlocked: rolloutv1.DrainWait}
}

// Compile validates spec.drain; errors name the field under path (spec.drain).
func Compile(in *rolloutv1.DrainPolicy, path *field.Path) (Policy, field.ErrorList) {
	p := Default()
	if in == nil {
		return p, nil
	}
	p.Set = true
	var errs field.ErrorList
	if in.BlockedTimeout != nil {
		if d := in.BlockedTimeout.Duration; d <= 0 {
			errs = append(errs, field.Invalid(path.Child("blockedTimeout"), d.String(), "must be above 0"))
		} else {
			p.BlockedTimeout = d
		}
	}
	switch in.OnBlocked {
	case "":
	case rolloutv1.DrainWait, rolloutv1.DrainSkip:
		p.OnBlocked = in.OnBlocked
	default:
		errs = append(errs, field.NotSupported(path.Child("onBlocked"), in.OnBlocked, []string{string(rolloutv1.DrainWait), string(rolloutv1.DrainSkip)}))
	}
	if in.DeleteBlockingPodsAfter != nil {
		if d := in.DeleteBlockingPodsAfter.Duration; d <= 0 {
			errs = append(errs, field.Invalid(path.Child("deleteBlockingPodsAfter"), d.String(), "must be above 0 (leave it unset to never delete pods)"))
		} else {
			p.DeleteAfter = d
		}
	}
	return p, errs
}
