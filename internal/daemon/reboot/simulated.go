package reboot

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SimulatedNode reboots a dev-cluster node: it does what the kubelet's absence would show on a
// real reboot — the Node goes NotReady — then restarts the agent process, whose start
// (MarkBooted) makes the Node Ready again.
type SimulatedNode struct {
	Nodes kubernetes.Interface
	Node  string
}

func (s SimulatedNode) Reboot(ctx context.Context, reason string) error {
	if err := s.setReady(ctx, corev1.ConditionFalse, "Rebooting", reason); err != nil {
		return err
	}
	return ProcessRestart{}.Reboot(ctx, reason)
}

// MarkBooted reports the node Ready, as a kubelet starting after boot would.
func (s SimulatedNode) MarkBooted(ctx context.Context) error {
	return s.setReady(ctx, corev1.ConditionTrue, "KubeletReady", "simulated node is up")
}

func (s SimulatedNode) setReady(ctx context.Context, status corev1.ConditionStatus, reason, message string) error {
	node, err := s.Nodes.CoreV1().Nodes().Get(ctx, s.Node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("simulated reboot: %w", err)
	}
	now := metav1.Now()
	found := false
	for i, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		found = true
		if c.Status == status {
			return nil
		}
		node.Status.Conditions[i] = corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	if !found {
		node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now})
	}
	_, err = s.Nodes.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}
