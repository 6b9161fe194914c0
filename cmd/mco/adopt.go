//go:build !nodeagent && !mcoserver

package main

import (
	"context"
	"errors"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/statusview"
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
				return adoptPool(cmd.Context(), cmd, c, pool, undo)
			}
			return adoptNodes(cmd.Context(), cmd, c, args, undo)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().StringVar(&pool, "pool", "", "approve every node of this MachineConfigPool that waits for adoption, now or later")
	cmd.Flags().BoolVar(&undo, "undo", false, "withdraw the approval instead")
	return cmd
}

// adoptNodes approves (or withdraws) every named node, or none: each is checked before any is
// written, so a refused name leaves the others as they were.
func adoptNodes(ctx context.Context, cmd *cobra.Command, c client.Client, names []string, undo bool) error {
	pools, _, err := statusview.ReadPoolsAndNodes(ctx, c)
	if err != nil {
		return err
	}
	var nodes []*corev1.Node
	var lines []string
	var errs []error
	for _, name := range names {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", name, err))
			continue
		}
		line, err := statusview.AdoptNode(n, pools, undo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		nodes, lines = append(nodes, n), append(lines, line)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; no node was changed", errors.Join(errs...))
	}
	for i, n := range nodes {
		if err := setApproval(ctx, c, n, undo); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		fmt.Fprintln(cmd.OutOrStdout(), lines[i])
	}
	return nil
}

func adoptPool(ctx context.Context, cmd *cobra.Command, c client.Client, name string, undo bool) error {
	pools, nodes, err := statusview.ReadPoolsAndNodes(ctx, c)
	if err != nil {
		return err
	}
	var pool *mcfgv1.MachineConfigPool
	for i := range pools {
		if pools[i].Name == name {
			pool = &pools[i]
		}
	}
	if pool == nil {
		return fmt.Errorf("mcp/%s: no such MachineConfigPool", name)
	}
	if err := setApproval(ctx, c, pool, undo); err != nil {
		return fmt.Errorf("mcp/%s: %w", name, err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), statusview.AdoptPool(pool, pools, nodes, undo))
	return nil
}

// setApproval sets (undo: removes) the adopt annotation with a merge patch of that one key.
func setApproval(ctx context.Context, c client.Client, obj client.Object, undo bool) error {
	value := fmt.Sprintf("%q", protocol.AdoptApproved)
	if undo {
		value = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, protocol.AdoptAnnotation, value)
	return c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
