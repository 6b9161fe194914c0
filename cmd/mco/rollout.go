//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/statusview"
)

func newRolloutCommand() *cobra.Command {
	rollout := &cobra.Command{Use: "rollout", Short: "Watch, resume and undo rollouts"}
	rollout.AddCommand(newRolloutStatusCommand(), newRolloutResumeCommand())
	rollout.AddCommand(newRolloutUndoCommand())
	return rollout
}

func newRolloutStatusCommand() *cobra.Command {
	var kubeconfig string
	var timeout, interval time.Duration
	status := &cobra.Command{
		Use:   "status mcp/POOL",
		Short: "Follow a pool's rollout until it is Updated (exit 0), Degraded (exit 1) or --timeout passes (exit 2)",
		Long: `Follow a pool's rollout: a progress bar and one line per node in flight (queued, draining,
cordoned, applying, rebooting, degraded). When a MachineConfigPoolRollout paces the pool, its
phase and reason for the pool, and when the next batch starts (the soak's end, the next
maintenance window, or ` + "`mco rollout resume`" + `). Exits 0 once the pool reports Updated on its
target, 1 when it is Degraded, 2 when --timeout passes first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, ok := cutPrefixes(args[0], "mcp/", "machineconfigpool/")
			if !ok {
				return fmt.Errorf("want mcp/POOL, got %q", args[0])
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			// A cancel at --timeout, not a deadline: client-go's rate limiter refuses at once
			// a wait that would pass a deadline, with an error that is not the context's, and
			// the timeout would then read as a failure (exit 1) instead of exit 2.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			stop := time.AfterFunc(timeout, cancel)
			defer stop.Stop()
			return followRollout(ctx, cmd, c, pool, interval)
		},
	}
	status.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	status.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	status.Flags().DurationVar(&interval, "interval", time.Second, "how often to refresh")
	return status
}

func followRollout(ctx context.Context, cmd *cobra.Command, c client.Client, name string, interval time.Duration) error {
	out := cmd.OutOrStdout()
	last := ""
	var pacing statusview.Pacing
	// Where the kind is not served, each list of it rediscovers every API group: ask once.
	policiesServed := true
	lastPending := ""
	for {
		pools, nodes, err := fetch(ctx, c)
		var policies []rolloutv1.MachineConfigPoolRollout
		if err == nil && policiesServed {
			policies, policiesServed, err = servedPolicies(ctx, c)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
		var pool *mcfgv1.MachineConfigPool
		for i := range pools {
			if pools[i].Name == name {
				pool = &pools[i]
			}
		}
		if err == nil && pool == nil {
			return fmt.Errorf("no pool %q", name)
		}
		if pool != nil && err == nil {
			pacing = statusview.PoolPacing(policies, pool)
			// Print only when something changed, so the output is a readable log too.
			if frame := statusview.RolloutFrame(pool, statusview.Nodes(pools, nodes), pacing, time.Now()); frame != last {
				fmt.Fprint(out, frame)
				last = frame
			}
			switch poolcondition.RolloutOutcome(pool) {
			case poolcondition.Complete:
				// `kubectl apply` returns before the controller renders the change, so an
				// Updated pool may not have seen it yet.
				pending, err := pendingRender(ctx, c, pools, name)
				if err != nil {
					if ctx.Err() != nil {
						break // the timeout, reported below
					}
					return err
				}
				if pending != "" {
					// Never report the config before the change as the rollout's end: wait
					// for the render (or the timeout, which says what was pending).
					if pending != lastPending {
						fmt.Fprintf(out, "pool %s: %s\n", name, pending)
						lastPending = pending
					}
					break
				}
				held := ""
				if statusview.RolledBack(pool) != "" {
					held = ", where a rollback holds it (see above)"
				}
				fmt.Fprintf(out, "pool %s is updated to %s%s\n", name, pool.Status.Configuration.Name, held)
				return nil
			case poolcondition.Failed:
				return &exitError{code: 1, err: fmt.Errorf("pool %s is degraded; see `mco status`", name)}
			default:
				lastPending = "" // the render came; a timeout now is about the rollout
			}
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("pool %s not updated before the timeout", name)
			if lastPending != "" {
				err = fmt.Errorf("%w; %s", err, lastPending)
			}
			if lines := pacing.Lines(time.Now()); len(lines) > 0 {
				err = fmt.Errorf("%w; %s", err, strings.Join(lines, "; "))
			}
			return &exitError{code: 2, err: err}
		case <-time.After(interval):
		}
	}
}

func newRolloutResumeCommand() *cobra.Command {
	var kubeconfig string
	var force bool
	resume := &cobra.Command{
		Use:   "resume mcp/POOL | mcprollout/NAME",
		Short: "End the canary or soak hold of a paced rollout, or a pool's rollback hold",
		Long: `End the hold of a MachineConfigPoolRollout: the canary's wait for approval once its nodes
updated, or a soak. It sets the policy's ` + rolloutv1.ResumeAnnotation + ` annotation to now;
the controller then starts the next batch (inside a maintenance window, when the policy has
any). A resume counts only for a batch that finished before it, so while a batch still runs
there is nothing to release and the command refuses (--force sets the annotation anyway).
Naming a pool resumes the one policy that selects it, which releases every pool of that
policy on hold; the command names each.

Naming a pool held by a rollback (` + "`mco rollout undo`" + ` or spec.onFailure: Rollback) also ends that
hold: it removes the pool's ` + rolloutv1.RollbackAnnotation + ` annotation, and the pool moves to its
newest render, the one that was rolled back, under its pacing as any rollout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			return resumeRollout(cmd.Context(), cmd, c, args[0], force, time.Now())
		},
	}
	resume.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	resume.Flags().BoolVar(&force, "force", false, "set the resume marker even when nothing is on hold now")
	return resume
}

func resumeRollout(ctx context.Context, cmd *cobra.Command, c client.Client, arg string, force bool, now time.Time) error {
	ended, err := resumeRollback(ctx, c, arg)
	if err != nil {
		return err
	}
	if ended != "" {
		fmt.Fprintln(cmd.OutOrStdout(), ended)
	}
	policy, pool, err := resolveResumeTarget(ctx, c, arg)
	if err == nil && policy != nil {
		var plan statusview.ResumePlan
		if plan, err = statusview.PlanResume(policy, pool, force); err == nil {
			return setResumed(ctx, cmd, c, policy, plan, now)
		}
	}
	if ended != "" {
		// The rollback was the hold to end; a policy with nothing to resume is no error then.
		return nil
	}
	return err
}

// resumeRollback ends the rollback hold of the pool arg names (mcp/POOL), saying so; "" when
// arg names a policy or the pool is not held by a rollback.
func resumeRollback(ctx context.Context, c client.Client, arg string) (string, error) {
	name, ok := cutPrefixes(arg, "mcp/", "machineconfigpool/")
	if !ok {
		return "", nil
	}
	pool := &mcfgv1.MachineConfigPool{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
		return "", fmt.Errorf("mcp/%s: %w", name, err)
	}
	return endRollback(ctx, c, pool)
}

// setResumed sets the policy's resume marker and prints what it released.
func setResumed(ctx context.Context, cmd *cobra.Command, c client.Client, policy *rolloutv1.MachineConfigPoolRollout, plan statusview.ResumePlan, now time.Time) error {
	before := policy.DeepCopy()
	if policy.Annotations == nil {
		policy.Annotations = map[string]string{}
	}
	policy.Annotations[rolloutv1.ResumeAnnotation] = now.UTC().Format(time.RFC3339)
	if err := c.Patch(ctx, policy, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting %s on mcprollout/%s: %w", rolloutv1.ResumeAnnotation, policy.Name, err)
	}
	for _, line := range plan.Lines {
		fmt.Fprintln(cmd.OutOrStdout(), line)
	}
	return nil
}

// resolveResumeTarget finds the policy to resume: the named one, or the one that selects the
// named pool. pool is "" when a policy was named.
func resolveResumeTarget(ctx context.Context, c client.Client, arg string) (*rolloutv1.MachineConfigPoolRollout, string, error) {
	if name, ok := cutPrefixes(arg, "mcprollout/", "machineconfigpoolrollout/"); ok {
		policy := &rolloutv1.MachineConfigPoolRollout{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, policy); err != nil {
			return nil, "", fmt.Errorf("mcprollout/%s: %w", name, err)
		}
		return policy, "", nil
	}
	name, ok := cutPrefixes(arg, "mcp/", "machineconfigpool/")
	if !ok {
		return nil, "", fmt.Errorf("want mcp/POOL or mcprollout/NAME, got %q", arg)
	}
	pool := &mcfgv1.MachineConfigPool{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
		return nil, "", fmt.Errorf("mcp/%s: %w", name, err)
	}
	policies, err := fetchPolicies(ctx, c)
	if err != nil {
		return nil, "", err
	}
	policy, err := statusview.PolicyFor(policies, pool)
	if err != nil {
		return nil, "", err
	}
	if policy == nil {
		return nil, "", fmt.Errorf("pool %s has no MachineConfigPoolRollout: no policy's spec.poolSelector matches its labels, so nothing holds it", name)
	}
	return policy, name, nil
}

// fetchPolicies lists the MachineConfigPoolRollouts; none where the cluster does not serve the kind
// (an install older than paced rollouts).
func fetchPolicies(ctx context.Context, c client.Client) ([]rolloutv1.MachineConfigPoolRollout, error) {
	policies, _, err := servedPolicies(ctx, c)
	return policies, err
}

// servedPolicies is fetchPolicies that also says whether the cluster serves the kind.
func servedPolicies(ctx context.Context, c client.Client) ([]rolloutv1.MachineConfigPoolRollout, bool, error) {
	var list rolloutv1.MachineConfigPoolRolloutList
	if err := c.List(ctx, &list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, false, nil
		}
		return nil, true, err
	}
	return list.Items, true, nil
}

// cutPrefixes cuts the first of prefixes s has, for "kind/name" arguments; false when none or the name is empty.
func cutPrefixes(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if name, ok := strings.CutPrefix(s, p); ok {
			return name, name != ""
		}
	}
	return "", false
}
