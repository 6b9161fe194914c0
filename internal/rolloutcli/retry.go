package rolloutcli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// Retry asks node name's agent to apply its target again after its boot guard reverted it:
// it sets the node's retry annotation to now, refusing a node not held back by a failed boot,
// and writes on w what the agent does.
func Retry(ctx context.Context, w io.Writer, c client.Client, name string, now time.Time) error {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return fmt.Errorf("node/%s: %w", name, err)
	}
	at := now.UTC().Format(time.RFC3339)
	if err := retryRefusal(node); err != nil {
		return err
	}
	before := node.DeepCopy()
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[rolloutv1.RetryAnnotation] = at
	if err := c.Patch(ctx, node, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting %s on node/%s: %w", rolloutv1.RetryAnnotation, name, err)
	}
	fmt.Fprintf(w, "node/%s: retry requested at %s; its agent applies %s again\n",
		name, at, node.Annotations[protocol.DesiredConfigAnnotation])
	return nil
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
