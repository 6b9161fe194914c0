//go:build !nodeagent && !mcoserver

package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/statusview"
)

func newStatusCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show pools (target, counts, pacing, conditions) and nodes (pool, configs, state, phase)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			pools, nodes, err := statusview.ReadPoolsAndNodes(cmd.Context(), c)
			if err != nil {
				return err
			}
			policies, _, err := statusview.ReadPolicies(cmd.Context(), c)
			if err != nil {
				return err
			}
			rows := statusview.WithDrainSteps(statusview.Nodes(pools, nodes), pools, nodes, policies, time.Now())
			return statusview.WriteTables(cmd.OutOrStdout(), statusview.Pools(pools, policies), rows)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	return cmd
}
