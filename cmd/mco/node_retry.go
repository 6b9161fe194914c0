//go:build !nodeagent && !mcoserver

package main

import (
	"time"

	"github.com/spf13/cobra"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rolloutcli"
	"github.com/mco-dev/mco/internal/scheme"
)

func newNodeCommand() *cobra.Command {
	node := &cobra.Command{Use: "node", Short: "Act on one node's updates"}
	node.AddCommand(newNodeRetryCommand())
	return node
}

func newNodeRetryCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "retry NODE",
		Short: "Let a node that reverted a broken boot try its target config again",
		Long: `A node whose boot guard reverted an update (the kubelet or the Node did not come back within the
pool's node boot timeout) reports Degraded with reason NodeBootFailed and does not try that
config again until its target changes. This sets the Node's ` + rolloutv1.RetryAnnotation + `
annotation to now; the node's agent then applies the target again (drain, write, reboot, guarded
again). It refuses a node that is not held back by a failed boot: a request older than the
failure it should release counts for nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := cutPrefixes(args[0], "node/", "nodes/")
			if name == "" {
				name = args[0]
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			return rolloutcli.Retry(cmd.Context(), cmd.OutOrStdout(), c, name, time.Now())
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	return cmd
}
