//go:build !nodeagent

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/statusview"
)

func newStatusCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show pools (target, counts, conditions) and nodes (pool, configs, state, phase)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			pools, nodes, err := fetch(cmd.Context(), c)
			if err != nil {
				return err
			}
			return statusview.WriteTables(cmd.OutOrStdout(), statusview.Pools(pools), statusview.Nodes(pools, nodes))
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	return cmd
}

func newRolloutCommand() *cobra.Command {
	rollout := &cobra.Command{Use: "rollout", Short: "Watch rollouts"}
	var kubeconfig string
	var timeout, interval time.Duration
	status := &cobra.Command{
		Use:   "status mcp/POOL",
		Short: "Follow a pool's rollout until it is Updated (exit 0), Degraded (exit 1) or --timeout passes (exit 2)",
		Long: `Follow a pool's rollout: a progress bar and one line per node in flight (queued, draining,
cordoned, applying, rebooting, degraded). Exits 0 once the pool reports Updated on its
target, 1 when it is Degraded, 2 when --timeout passes first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, ok := strings.CutPrefix(args[0], "mcp/")
			if !ok {
				pool, ok = strings.CutPrefix(args[0], "machineconfigpool/")
			}
			if !ok || pool == "" {
				return fmt.Errorf("want mcp/POOL, got %q", args[0])
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return followRollout(ctx, cmd, c, pool, interval)
		},
	}
	status.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	status.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	status.Flags().DurationVar(&interval, "interval", time.Second, "how often to refresh")
	rollout.AddCommand(status)
	return rollout
}

func followRollout(ctx context.Context, cmd *cobra.Command, c client.Client, name string, interval time.Duration) error {
	out := cmd.OutOrStdout()
	last := ""
	for {
		pools, nodes, err := fetch(ctx, c)
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
		if pool != nil {
			// Print only when something changed, so the output is a readable log too.
			if frame := statusview.RolloutFrame(pool, statusview.Nodes(pools, nodes)); frame != last {
				fmt.Fprint(out, frame)
				last = frame
			}
			switch statusview.PoolOutcome(pool) {
			case statusview.Complete:
				fmt.Fprintf(out, "pool %s is updated to %s\n", name, pool.Status.Configuration.Name)
				return nil
			case statusview.Failed:
				return &exitError{code: 1, err: fmt.Errorf("pool %s is degraded; see `mco status`", name)}
			}
		}
		select {
		case <-ctx.Done():
			return &exitError{code: 2, err: fmt.Errorf("pool %s not updated before the timeout", name)}
		case <-time.After(interval):
		}
	}
}

func fetch(ctx context.Context, c client.Client) ([]mcfgv1.MachineConfigPool, []corev1.Node, error) {
	var pools mcfgv1.MachineConfigPoolList
	if err := c.List(ctx, &pools); err != nil {
		return nil, nil, err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, nil, err
	}
	return pools.Items, nodes.Items, nil
}
