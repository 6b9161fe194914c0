package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// labelRoles gives each machine's Node the labels and taints of its role (nodeRoles) once the
// kubelet registered it, as an installer does: a kubelet may not set node-role.kubernetes.io
// labels on its own Node. A machine booting into a custom pool is registered as a worker, as on
// OpenShift; the node controller gives it the custom pool's labels from the config it first
// booted into (firstPivotConfig), which is the path this exercises.
func labelRoles(ctx context.Context, c client.Client, layout Layout, nodes []corev1.Node, machines []string) error {
	for i := range nodes {
		n := &nodes[i]
		if !slices.Contains(machines, n.Name) {
			continue
		}
		labels, taints := nodeRoles(layout, n.Name)
		patch := client.MergeFrom(n.DeepCopy())
		changed := false
		for k, v := range labels {
			if got, ok := n.Labels[k]; !ok || got != v {
				if n.Labels == nil {
					n.Labels = map[string]string{}
				}
				n.Labels[k], changed = v, true
			}
		}
		for _, t := range taints {
			if !hasTaint(n, t.Key) {
				// As a control plane: only what tolerates it (mco's server, controller and agent;
				// the cluster's own) runs there, never a workload.
				n.Spec.Taints, changed = append(n.Spec.Taints, t), true
			}
		}
		if !changed {
			continue
		}
		if err := c.Patch(ctx, n, patch); err != nil {
			return fmt.Errorf("labelling Node %s as its role: %w", n.Name, err)
		}
	}
	return nil
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}
