//go:build !nodeagent && !mcoserver

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rolloutcli"
	"github.com/mco-dev/mco/internal/scheme"
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
			err = rolloutcli.Follow(ctx, cmd.OutOrStdout(), c, pool, interval)
			if timedOut := (*rolloutcli.TimedOutError)(nil); errors.As(err, &timedOut) {
				return &exitError{code: 2, err: err}
			}
			return err // a degraded pool exits 1, as every error
		},
	}
	status.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	status.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	status.Flags().DurationVar(&interval, "interval", time.Second, "how often to refresh")
	return status
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
			var target rolloutcli.Target
			pool, isPool := cutPrefixes(args[0], "mcp/", "machineconfigpool/")
			policy, isPolicy := cutPrefixes(args[0], "mcprollout/", "machineconfigpoolrollout/")
			switch {
			case isPool:
				target.Pool = pool
			case isPolicy:
				target.Policy = policy
			default:
				return fmt.Errorf("want mcp/POOL or mcprollout/NAME, got %q", args[0])
			}
			return rolloutcli.Resume(cmd.Context(), cmd.OutOrStdout(), c, target, force, time.Now())
		},
	}
	resume.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	resume.Flags().BoolVar(&force, "force", false, "set the resume marker even when nothing is on hold now")
	return resume
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
