//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"context"
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
		Short: "Show pools (target, counts, pacing, conditions) and nodes (pool, configs, state, phase)",
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
			policies, err := fetchPolicies(cmd.Context(), c)
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
