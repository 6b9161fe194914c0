package node

import (
	"context"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/scheme"
)

// A DaemonSet pod's readiness wakes only the pools whose health gate reads it: those of the
// pod's node that a policy paces. Pods flip readiness on every reboot; an unpaced pool has no gate.
func TestPodEventWakesOnlyPacedPools(t *testing.T) {
	pool := func(name string, labels map[string]string) *mcfgv1.MachineConfigPool {
		p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/worker": ""}}
		return p
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}}
	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"paced": "yes"}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(node, policy,
		pool("paced", map[string]string{"paced": "yes"}), pool("plain", nil)).Build()
	r := &Reconciler{Client: c}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dns-x"}, Spec: corev1.PodSpec{NodeName: "w-1"}}
	reqs := r.pacedPoolsOfPod(context.Background(), pod)
	if len(reqs) != 1 || reqs[0].Name != "paced" {
		t.Fatalf("pod event enqueued %v, want only pool paced", reqs)
	}
}
