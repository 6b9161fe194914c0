//go:build !nodeagent && !mcoserver

package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rolloutcli"
	"github.com/mco-dev/mco/internal/scheme"
)

func newRolloutUndoCommand() *cobra.Command {
	var kubeconfig string
	var dryRun bool
	undo := &cobra.Command{
		Use:   "undo mcp/POOL [--dry-run]",
		Short: "Return a pool to the rendered config its nodes ran before its current rollout",
		Long: `Undo a pool's rollout, as ` + "`kubectl rollout undo`" + ` does a Deployment's: the pool returns to the
rendered config its nodes ran before. While a rollout is in progress (spec.configuration is not
status.configuration yet) that is status.configuration; after a completed one it is the previous
configuration mco recorded when it completed (annotation ` + rolloutv1.PreviousConfigurationAnnotation + `).

It first prints the plan, as ` + "`mco plan --pool POOL`" + ` would show it once the undo is written: which
nodes go from which config, and whether each group is drained and rebooted. --dry-run stops there.
Then it writes the pool's ` + rolloutv1.RollbackAnnotation + ` annotation; the render controller points the
pool back, and the node controller moves its nodes under the pool's maxUnavailable and its
MachineConfigPoolRollout (canary, soak, windows), drained and rebooted as the plan says.

The MachineConfigs stay as written, so GitOps tools keep reconciling them. The pool is held on
the earlier config (its RolledBack condition, ` + "`mco status`, `mco explain mcp/POOL`" + `) until its
MachineConfigs change (a new render) or ` + "`mco rollout resume mcp/POOL`" + `.

Refused when the pool has nothing to return to, its rendered config is no longer on the cluster,
or a rollback already holds the pool.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, ok := cutPrefixes(args[0], "mcp/", "machineconfigpool/")
			if !ok {
				return fmt.Errorf("want mcp/POOL, got %q", args[0])
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			return rolloutcli.Undo(cmd.Context(), cmd.OutOrStdout(), c, name, dryRun, time.Now())
		},
	}
	undo.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	undo.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and write nothing")
	return undo
}
