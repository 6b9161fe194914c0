package nodesim

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
)

// CreateNode creates a simulated, Ready node already running config (current = desired, Done),
// as a node the agent has managed for a while looks.
func CreateNode(ctx context.Context, c client.Client, name, config string, labels map[string]string) (*corev1.Node, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{SimulatedLabel: ""},
		Annotations: map[string]string{
			protocol.CurrentConfigAnnotation: config,
			protocol.DesiredConfigAnnotation: config,
			protocol.StateAnnotation:         string(protocol.NodeDone),
		},
	}}
	maps.Copy(n.Labels, labels)
	if err := c.Create(ctx, n); err != nil {
		return nil, err
	}
	return n, SetReady(ctx, c, n, true)
}

// SetReady sets the node's Ready condition, as a kubelet would.
func SetReady(ctx context.Context, c client.Client, n *corev1.Node, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	// A patch, not an update: a controller labelling the new node meanwhile is no conflict.
	patch := client.MergeFrom(n.DeepCopy())
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: status, Reason: "Simulated",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	return c.Status().Patch(ctx, n, patch)
}
