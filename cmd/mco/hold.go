//go:build !nodeagent && !mcoserver

package main

import (
	"github.com/spf13/cobra"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rolloutcli"
	"github.com/mco-dev/mco/internal/scheme"
)

func newHoldCommand() *cobra.Command {
	var kubeconfig string
	var undo bool
	cmd := &cobra.Command{
		Use:   "hold NODE...",
		Short: "Hold nodes back from updates (--undo releases them)",
		Long: `Hold nodes back: mco hold NODE... sets ` + rolloutv1.HoldAnnotation + `=true on each Node, and
the node controller then never chooses them for an update. An update already in progress on a
node finishes. The pool waits for its held nodes: it is not Updated while one is behind its
config, nor Degraded for it; its NodesHeld condition names them. --undo removes the annotation,
and the node is updated with its pool again. Every named node is checked before any is
changed: an unknown one changes none.`,
		Example: `  mco hold worker-0 worker-3
  mco hold --undo worker-0`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			return rolloutcli.Hold(cmd.Context(), cmd.OutOrStdout(), c, args, undo)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().BoolVar(&undo, "undo", false, "release the nodes instead")
	return cmd
}
