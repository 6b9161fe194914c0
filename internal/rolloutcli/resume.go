package rolloutcli

import (
	"context"
	"fmt"
	"io"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/statusview"
)

// Target is what `mco rollout resume` names: a pool (mcp/POOL) or a policy (mcprollout/NAME).
type Target struct{ Pool, Policy string }

// Resume ends the holds of target: a named pool's rollback hold, and the canary or soak hold of
// the policy named or selecting the pool (statusview.PlanResume; force sets its marker even with
// nothing on hold), writing on w what it released.
func Resume(ctx context.Context, w io.Writer, c client.Client, target Target, force bool, now time.Time) error {
	ended := ""
	if target.Pool != "" {
		pool := &mcfgv1.MachineConfigPool{}
		if err := c.Get(ctx, client.ObjectKey{Name: target.Pool}, pool); err != nil {
			return fmt.Errorf("mcp/%s: %w", target.Pool, err)
		}
		var err error
		if ended, err = endRollback(ctx, c, pool); err != nil {
			return err
		}
	}
	if ended != "" {
		fmt.Fprintln(w, ended)
	}
	policy, err := policyToResume(ctx, c, target)
	if err == nil && policy != nil {
		var plan statusview.ResumePlan
		if plan, err = statusview.PlanResume(policy, target.Pool, force); err == nil {
			return setResumed(ctx, w, c, policy, plan, now)
		}
	}
	if ended != "" {
		// The rollback was the hold to end; a policy with nothing to resume is no error then.
		return nil
	}
	return err
}

// endRollback removes the pool's rollback annotation and says what that does; "" when no
// rollback holds the pool.
func endRollback(ctx context.Context, c client.Client, pool *mcfgv1.MachineConfigPool) (string, error) {
	if _, held := pool.Annotations[rolloutv1.RollbackAnnotation]; !held {
		return "", nil
	}
	what := "an unreadable rollback"
	if rb, err := rollback.Of(pool); err == nil {
		what = rollback.Describe(rb) + "; it was held on " + rb.To
	}
	before := pool.DeepCopy()
	delete(pool.Annotations, rolloutv1.RollbackAnnotation)
	if err := c.Patch(ctx, pool, client.MergeFrom(before)); err != nil {
		return "", fmt.Errorf("removing %s from mcp/%s: %w", rolloutv1.RollbackAnnotation, pool.Name, err)
	}
	return fmt.Sprintf("ended the rollback hold of pool %s (%s): it moves to its newest render", pool.Name, what), nil
}

// setResumed sets the policy's resume marker and prints what it released.
func setResumed(ctx context.Context, w io.Writer, c client.Client, policy *rolloutv1.MachineConfigPoolRollout, plan statusview.ResumePlan, now time.Time) error {
	before := policy.DeepCopy()
	if policy.Annotations == nil {
		policy.Annotations = map[string]string{}
	}
	policy.Annotations[rolloutv1.ResumeAnnotation] = now.UTC().Format(time.RFC3339)
	if err := c.Patch(ctx, policy, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting %s on mcprollout/%s: %w", rolloutv1.ResumeAnnotation, policy.Name, err)
	}
	for _, line := range plan.Lines {
		fmt.Fprintln(w, line)
	}
	return nil
}

// policyToResume finds the policy to resume: the named one, or the one that selects the
// named pool.
func policyToResume(ctx context.Context, c client.Client, target Target) (*rolloutv1.MachineConfigPoolRollout, error) {
	if target.Policy != "" {
		policy := &rolloutv1.MachineConfigPoolRollout{}
		if err := c.Get(ctx, client.ObjectKey{Name: target.Policy}, policy); err != nil {
			return nil, fmt.Errorf("mcprollout/%s: %w", target.Policy, err)
		}
		return policy, nil
	}
	pool := &mcfgv1.MachineConfigPool{}
	if err := c.Get(ctx, client.ObjectKey{Name: target.Pool}, pool); err != nil {
		return nil, fmt.Errorf("mcp/%s: %w", target.Pool, err)
	}
	policies, _, err := statusview.ReadPolicies(ctx, c)
	if err != nil {
		return nil, err
	}
	policy, err := statusview.PolicyFor(policies, pool)
	if err != nil {
		return nil, err
	}
	if policy == nil {
		return nil, fmt.Errorf("pool %s has no MachineConfigPoolRollout: no policy's spec.poolSelector matches its labels, so nothing holds it", target.Pool)
	}
	return policy, nil
}
