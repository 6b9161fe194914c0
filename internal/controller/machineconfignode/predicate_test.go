package machineconfignode

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// Only a pool's nodeSelector (or its coming and going) moves nodes between pools; a new target
// must not reconcile every node.
func TestPoolMembershipChange(t *testing.T) {
	pool := func(selector map[string]string, target string, gen int64) *mcfgv1.MachineConfigPool {
		return &mcfgv1.MachineConfigPool{
			ObjectMeta: metav1.ObjectMeta{Name: "worker", Generation: gen},
			Spec: mcfgv1.MachineConfigPoolSpec{
				NodeSelector:  &metav1.LabelSelector{MatchLabels: selector},
				Configuration: mcfgv1.MachineConfigPoolStatusConfiguration{ObjectReference: corev1.ObjectReference{Name: target}},
			},
		}
	}
	worker := map[string]string{"node-role.kubernetes.io/worker": ""}
	infra := map[string]string{"node-role.kubernetes.io/infra": ""}
	for _, tc := range []struct {
		name     string
		old, new *mcfgv1.MachineConfigPool
		want     bool
	}{
		{"new target", pool(worker, "rendered-worker-1", 1), pool(worker, "rendered-worker-2", 2), false},
		{"status only", pool(worker, "rendered-worker-1", 1), pool(worker, "rendered-worker-1", 1), false},
		{"another selector", pool(worker, "rendered-worker-1", 1), pool(infra, "rendered-worker-1", 2), true},
		{"selector dropped", pool(worker, "rendered-worker-1", 1), &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Generation: 2}}, true},
	} {
		if got := poolMembershipChange.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !poolMembershipChange.Create(event.CreateEvent{Object: pool(worker, "", 1)}) || !poolMembershipChange.Delete(event.DeleteEvent{Object: pool(worker, "", 1)}) {
		t.Error("a pool created or deleted must reconcile the nodes")
	}
}

// The hold and the update priority are mirrored on the MachineConfigNode, so their changes pass.
func TestNodeChangeMirrored(t *testing.T) {
	n := func(a map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w", Annotations: a}}
	}
	for _, tc := range []struct {
		name     string
		old, new map[string]string
		want     bool
	}{
		{"held", nil, map[string]string{rolloutv1.HoldAnnotation: "true"}, true},
		{"priority", map[string]string{rolloutv1.UpdatePriorityAnnotation: "1"}, map[string]string{rolloutv1.UpdatePriorityAnnotation: "2"}, true},
		{"another annotation", nil, map[string]string{"x": "y"}, false},
	} {
		if got := nodeChange.Update(event.UpdateEvent{ObjectOld: n(tc.old), ObjectNew: n(tc.new)}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
