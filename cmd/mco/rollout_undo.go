//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"context"
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/rollback"
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
			return undoRollout(cmd.Context(), cmd, c, name, dryRun, time.Now())
		},
	}
	undo.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	undo.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and write nothing")
	return undo
}

// undoRollout reads the cluster, decides the rollback (rollback.Undo), prints its plan and,
// unless dryRun, writes it.
func undoRollout(ctx context.Context, cmd *cobra.Command, c client.Client, name string, dryRun bool, now time.Time) error {
	cluster, err := readCluster(ctx, c)
	if err != nil {
		return err
	}
	var pool *mcfgv1.MachineConfigPool
	for _, p := range cluster.Pools {
		if p.Name == name {
			pool = p
		}
	}
	if pool == nil {
		return fmt.Errorf("mcp/%s: no such MachineConfigPool", name)
	}
	exists := map[string]bool{}
	for _, mc := range cluster.MachineConfigs {
		exists[mc.Name] = true
	}
	rb, err := rollback.Undo(pool, func(n string) bool { return exists[n] }, now)
	if err != nil {
		return err
	}
	// The plan is the pool as the render controller sees it once the annotation is written.
	before := pool.DeepCopy()
	if pool.Annotations == nil {
		pool.Annotations = map[string]string{}
	}
	pool.Annotations[rolloutv1.RollbackAnnotation] = rollback.Encode(rb)
	report, err := changeplan.Live(cluster, changeplan.Applied{}, name)
	if err != nil {
		return err
	}
	if got := report.Pools[0].Rendered; got != rb.To {
		// The MachineConfigs render something newer than the pool's target (a render not
		// written yet, or one that fails): the hold would end, or not start, at once.
		return fmt.Errorf("pool %s: its MachineConfigs now render %s, not its target %s, so an undo of %s would end as soon as the render controller renders them; see `mco plan --pool %s`",
			name, orNone(got), rb.From, rb.From, name)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "undo of pool %s: %s → %s (%s)\n\n", name, rb.From, rb.To, undoSource(before, rb))
	if err := printReport(out, report, nil); err != nil {
		return err
	}
	if dryRun {
		fmt.Fprintf(out, "\n--dry-run: nothing written; without it, pool %s is held on %s until its MachineConfigs change or `mco rollout resume mcp/%s`\n", name, rb.To, name)
		return nil
	}
	// The optimistic lock: an undo decided from a pool that changed since (a new target, another
	// undo) is refused rather than written over it.
	if err := c.Patch(ctx, pool, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing %s on mcp/%s: %w", rolloutv1.RollbackAnnotation, name, err)
	}
	fmt.Fprintf(out, "\npool %s: rolling back from %s to %s; held there until its MachineConfigs change or `mco rollout resume mcp/%s` (follow it with `mco rollout status mcp/%s`)\n",
		name, rb.From, rb.To, name, name)
	return nil
}

func undoSource(pool *mcfgv1.MachineConfigPool, rb rolloutv1.Rollback) string {
	if pool.Status.Configuration.Name == rb.To {
		return "the rollout in progress is undone: back to the config every node ran before it"
	}
	return "the completed rollout is undone: back to the previous configuration"
}

// endRollback removes the pool's rollback annotation, for `mco rollout resume mcp/POOL`, and
// says what that does; "" when no rollback holds the pool.
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
