package operatorstatus

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// A pool that waits only for held nodes (Updating False, NodesHeld True) says so rather than
// "<unknown>".
func TestPoolStatusHeld(t *testing.T) {
	p := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	p.Spec.Configuration.Name = "rendered-worker-2"
	p.Status.MachineCount, p.Status.UpdatedMachineCount = 3, 2
	now := metav1.Now()
	poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", "", now)
	poolcondition.Set(&p.Status, poolcondition.NodesHeld, corev1.ConditionTrue, "1 nodes are held", "Waiting for held nodes: worker-0 (on rendered-worker-1). Release them with `mco hold --undo worker-0`", now)
	want := "pool waits for held nodes with 2 out of 3 nodes at latest configuration rendered-worker-2: Waiting for held nodes: worker-0 (on rendered-worker-1). Release them with `mco hold --undo worker-0`"
	if got := poolStatus(&p); got != want {
		t.Errorf("poolStatus = %q, want %q", got, want)
	}
}
