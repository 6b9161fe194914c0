package rollback

import (
	"encoding/json"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// ByUndo is Rollback.By for `mco rollout undo`.
const ByUndo = "mco rollout undo"

// ByPolicy is Rollback.By for a policy's spec.onFailure: Rollback.
func ByPolicy(policy string) string { return "spec.onFailure of mcprollout/" + policy }

// Of reads the pool's rollback annotation: nil when there is none, an error naming the pool,
// the annotation and what is wrong when its value is not a rollback.
func Of(pool *mcfgv1.MachineConfigPool) (*rolloutv1.Rollback, error) {
	raw, ok := pool.Annotations[rolloutv1.RollbackAnnotation]
	if !ok {
		return nil, nil
	}
	var rb rolloutv1.Rollback
	if err := json.Unmarshal([]byte(raw), &rb); err != nil {
		return nil, fmt.Errorf("pool %s: annotation %s is not a rollback (JSON with from, to, by, reason, at): %v", pool.Name, rolloutv1.RollbackAnnotation, err)
	}
	switch {
	case rb.From == "" || rb.To == "":
		return nil, fmt.Errorf("pool %s: annotation %s: from and to must both name a rendered config (from %q, to %q)", pool.Name, rolloutv1.RollbackAnnotation, rb.From, rb.To)
	case rb.From == rb.To:
		return nil, fmt.Errorf("pool %s: annotation %s: from and to are both %s: nothing to roll back", pool.Name, rolloutv1.RollbackAnnotation, rb.From)
	}
	return &rb, nil
}

// Encode is the annotation's value for rb.
func Encode(rb rolloutv1.Rollback) string {
	out, _ := json.Marshal(rb) // a struct of strings always marshals
	return string(out)
}

// Describe says what a rollback did, for conditions, events and `mco explain`.
func Describe(rb *rolloutv1.Rollback) string {
	s := fmt.Sprintf("%s was rolled back by %s", rb.From, rb.By)
	if rb.Reason != "" {
		s += ": " + rb.Reason
	}
	return s
}
