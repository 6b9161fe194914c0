//go:build !nodeagent && !mcoserver

package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rolloutcli"
	"github.com/mco-dev/mco/internal/scheme"
)

func newAdoptCommand() *cobra.Command {
	var kubeconfig, pool string
	var undo bool
	cmd := &cobra.Command{
		Use:   "adopt NODE... | --pool POOL",
		Short: "Approve the adoption of nodes mco did not boot (kubeadm-built nodes)",
		Long: `Approve the adoption of nodes mco did not boot: a node whose agent compared its host with
its pool's config and found that adopting it changes the host waits (` + "`mco status`" + ` phase
adoption; ` + "`mco plan`" + ` shows each file's diff) until approved. mco adopt NODE... sets
` + protocol.AdoptAnnotation + `=true on each Node; --pool POOL sets it on the pool, which approves
every node of the pool that waits, now or later. The node controller then updates the approved
nodes as planned, within the pool's maxUnavailable. --undo removes the approval; an adoption
already started goes on. A node mco manages already is refused: it has nothing to adopt.`,
		Example: `  mco adopt worker-3 worker-4
  mco adopt --pool worker
  mco adopt --undo worker-3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (pool == "") == (len(args) == 0) {
				return errors.New("name the nodes to adopt, or --pool POOL (not both)")
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			if pool != "" {
				return rolloutcli.AdoptPool(cmd.Context(), cmd.OutOrStdout(), c, pool, undo)
			}
			return rolloutcli.AdoptNodes(cmd.Context(), cmd.OutOrStdout(), c, args, undo)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().StringVar(&pool, "pool", "", "approve every node of this MachineConfigPool that waits for adoption, now or later")
	cmd.Flags().BoolVar(&undo, "undo", false, "withdraw the approval instead")
	return cmd
}
