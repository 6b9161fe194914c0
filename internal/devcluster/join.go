package devcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/server"
)

// waitBootstrapToken waits until kube-controller-manager has put the bootstrap ServiceAccount's
// token into the Secret the server serves it from: a machine booted before would get a
// kubeconfig its kubelet cannot join with.
func waitBootstrapToken(ctx context.Context, c client.Client) error {
	key := client.ObjectKey{Namespace: ServerNamespace, Name: server.DefaultBootstrapTokenSecret}
	if err := poll(ctx, time.Minute, func() bool {
		var sec corev1.Secret
		return c.Get(ctx, key, &sec) == nil && len(sec.Data[corev1.ServiceAccountTokenKey]) > 0
	}); err != nil {
		return fmt.Errorf("secret %s has no token: %w; is kube-controller-manager running? (see logs/%s.log)", key, err, ControllerManagerProcess)
	}
	return nil
}

// labelRoles gives each machine's Node its role label once the kubelet registered it, and a
// master's its NoSchedule taint, as an installer does (kubeadm for its control-plane nodes): a
// kubelet may not set node-role.kubernetes.io labels on its own Node.
func labelRoles(ctx context.Context, c client.Client, nodes []corev1.Node, machines []string) error {
	for i := range nodes {
		n := &nodes[i]
		role := roleLabel(n.Name)
		taint := role == protocol.MasterRoleLabel && !hasTaint(n, role)
		if !slices.Contains(machines, n.Name) || (hasLabel(n, role) && !taint) {
			continue
		}
		patch := client.MergeFrom(n.DeepCopy())
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[role] = ""
		if taint {
			// As OpenShift's control plane: only what tolerates it (mco's server, controller
			// and agent; the cluster's own) runs there, never a workload.
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: role, Effect: corev1.TaintEffectNoSchedule})
		}
		if err := c.Patch(ctx, n, patch); err != nil {
			return fmt.Errorf("labelling Node %s %s: %w", n.Name, role, err)
		}
	}
	return nil
}

// roleLabel is the role of machine name (<pool>-<n>): master on masters, worker on every other
// machine. A machine booting into a custom pool is registered as a worker too, as on OpenShift;
// the node controller gives it the custom pool's labels from the config it first booted into
// (firstPivotConfig), which is the path this exercises.
func roleLabel(name string) string {
	if pool := name[:max(strings.LastIndex(name, "-"), 0)]; pool == protocol.MasterPool {
		return protocol.MasterRoleLabel
	}
	return protocol.WorkerRoleLabel
}

func hasLabel(n *corev1.Node, label string) bool { _, ok := n.Labels[label]; return ok }

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}
