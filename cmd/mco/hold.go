//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/statusview"
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
			return holdNodes(cmd.Context(), cmd, c, args, undo)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().BoolVar(&undo, "undo", false, "release the nodes instead")
	return cmd
}

// holdNodes holds (or releases) every named node, or none: each is read before any is written.
func holdNodes(ctx context.Context, cmd *cobra.Command, c client.Client, names []string, undo bool) error {
	nodes := make([]*corev1.Node, 0, len(names))
	var errs []error
	for _, name := range names {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			if apierrors.IsNotFound(err) {
				err = errors.New("no such node")
			}
			errs = append(errs, fmt.Errorf("node %s: %w", name, err))
			continue
		}
		nodes = append(nodes, n)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; no node was changed", errors.Join(errs...))
	}
	for _, n := range nodes {
		write, line := statusview.HoldChange(n, undo)
		read := n.DeepCopy()
		if write {
			// The patch answers with the Node as written: a config the node controller gave it
			// between our read and our write shows there.
			if err := setHold(ctx, c, n, undo); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		if late := statusview.TargetedMeanwhile(read, n); late != "" && !undo {
			line += "; " + late
		}
		fmt.Fprintln(cmd.OutOrStdout(), line)
	}
	return nil
}

// setHold sets (undo: removes) the hold annotation with a merge patch of that one key, so
// nothing else on the Node is written.
func setHold(ctx context.Context, c client.Client, n *corev1.Node, undo bool) error {
	value := `"true"`
	if undo {
		value = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, rolloutv1.HoldAnnotation, value)
	return c.Patch(ctx, n, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
