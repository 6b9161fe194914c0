//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
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
			node := &corev1.Node{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, node); err != nil {
				return fmt.Errorf("node/%s: %w", name, err)
			}
			now := time.Now().UTC().Format(time.RFC3339)
			if err := retryRefusal(node); err != nil {
				return err
			}
			before := node.DeepCopy()
			if node.Annotations == nil {
				node.Annotations = map[string]string{}
			}
			node.Annotations[rolloutv1.RetryAnnotation] = now
			if err := c.Patch(cmd.Context(), node, client.MergeFrom(before)); err != nil {
				return fmt.Errorf("setting %s on node/%s: %w", rolloutv1.RetryAnnotation, name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "node/%s: retry requested at %s; its agent applies %s again\n",
				name, now, node.Annotations[protocol.DesiredConfigAnnotation])
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	return cmd
}

// retryRefusal says why node has nothing to retry: its agent does not report a failed boot.
func retryRefusal(node *corev1.Node) error {
	reason := node.Annotations[protocol.ReasonAnnotation]
	if strings.HasPrefix(reason, "NodeBootFailed:") {
		return nil
	}
	state := node.Annotations[protocol.StateAnnotation]
	if state == "" {
		state = "none"
	}
	return fmt.Errorf("node/%s is not held back by a failed boot (state %s, reason %q): nothing to retry", node.Name, state, reason)
}
