package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// statusInPod: mco's own image (bin/mco-image.tar, `make image`), preloaded into the machines'
// containerd without a registry, runs `mco status` as a pod of its own on a real kubelet and
// talks to the API server the way in-cluster clients do: through the kubernetes Service (which
// the dev network leads to the API server) with the bound token ServiceAccount admission
// projected, the API server's certificate verified for the Service's address. `kubectl logs`
// then reaches the kubelet (the API server's client certificate, authenticated with the served
// kubelet CA). (Every dev cluster's controller and server pods are in-cluster clients too; this
// is the CLI's path, on a cluster a test already has: a cluster of its own would cost a boot.)
func statusInPod(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	t.Helper()
	kubectl := testenv.RequireTool(t, "kubectl")
	const sa = "mco-e2e-reader"
	objects := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: sa}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"machineconfiguration.openshift.io", "rollout.mco.dev", "operator.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: sa},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: sa}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mco-status"}, Spec: corev1.PodSpec{
			ServiceAccountName: sa, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "mco", Image: "ghcr.io/mco-dev/mco:latest", ImagePullPolicy: corev1.PullNever, Args: []string{"status"}}},
		}},
	}
	for _, obj := range objects {
		if err := cl.C.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		// The cluster goes on to other steps (TestFromASettledPool).
		t.Cleanup(func() {
			if err := cl.C.Delete(context.Background(), obj); err != nil {
				t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
			}
		})
	}
	var pod corev1.Pod
	clustertest.Eventually(t, 2*time.Minute, "the pod to finish", func() bool {
		if err := cl.C.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mco-status"}, &pod); err != nil {
			return false
		}
		return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	})
	logs, err := clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "logs", "-n", "default", "mco-status")
	if err != nil {
		t.Fatalf("kubectl logs (the API server asking the kubelet): %v", err)
	}
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("`mco status` in a pod: %s\n%s", pod.Status.Phase, logs)
	}
	for _, want := range []string{"worker-0", "Done"} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("`mco status` in a pod does not show %q:\n%s", want, logs)
		}
	}
	if !slices.Contains(workers, pod.Spec.NodeName) {
		t.Errorf("the pod ran on %q, not on a worker (%v)", pod.Spec.NodeName, workers)
	}
}
