// Package pacingselect finds the MachineConfigPoolRollout that paces a pool: the one policy whose
// spec.poolSelector matches the pool's labels, by the controller's rule: a missing or invalid
// selector selects nothing, an empty one ({}) every pool, as Kubernetes label selectors do. A
// pool selected by two policies is paced by neither (the controller holds it), so For reports
// both by name.
package pacingselect

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Selects reports whether policy's spec.poolSelector selects pool.
func Selects(policy *rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) bool {
	if policy.Spec.PoolSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(policy.Spec.PoolSelector)
	return err == nil && sel.Matches(labels.Set(pool.Labels))
}

// ConflictError is a pool that more than one policy selects.
type ConflictError struct {
	Pool     string
	Policies []string // sorted names
}

func (e *ConflictError) Error() string {
	names := make([]string, len(e.Policies))
	for i, p := range e.Policies {
		names[i] = "mcprollout/" + p
	}
	return fmt.Sprintf("pool %s is selected by %d MachineConfigPoolRollouts (%s): no node of it starts until only one selects it",
		e.Pool, len(names), strings.Join(names, ", "))
}

// For returns the policy that selects pool, nil when none does, or a *ConflictError when several do.
func For(policies []rolloutv1.MachineConfigPoolRollout, pool *mcfgv1.MachineConfigPool) (*rolloutv1.MachineConfigPoolRollout, error) {
	var found []*rolloutv1.MachineConfigPoolRollout
	for i := range policies {
		if Selects(&policies[i], pool) {
			found = append(found, &policies[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	conflict := &ConflictError{Pool: pool.Name}
	for _, p := range found {
		conflict.Policies = append(conflict.Policies, p.Name)
	}
	slices.Sort(conflict.Policies)
	return nil, conflict
}

// PoolStatus is policy's status.pools entry for the named pool; false until the controller
// decided for that pool.
func PoolStatus(policy *rolloutv1.MachineConfigPoolRollout, pool string) (rolloutv1.PoolRolloutStatus, bool) {
	for _, s := range policy.Status.Pools {
		if s.Name == pool {
			return s, true
		}
	}
	return rolloutv1.PoolRolloutStatus{}, false
}
