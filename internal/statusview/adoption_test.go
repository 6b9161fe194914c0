package statusview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/protocol"
)

// A node waiting for adoption shows its phase, what adopting it would do and how to approve;
// one not compared yet is joining; the pool's NodesAwaitingAdoption condition is listed with
// the pool's conditions.
func TestAdoptionRows(t *testing.T) {
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	const target = "rendered-worker-new"
	worker.Spec.Configuration.Name = target
	worker.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: "NodesAwaitingAdoption", Status: corev1.ConditionTrue,
		Message: "Node k1: adopting into rendered-worker-new would write 1 file (/etc/chrony.conf), drain, then reboot"}}
	plan, err := adoption.Encode(adoption.Plan{Target: target, Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent}},
		Actions: "Reboot", Drain: true, Reboot: true})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []corev1.Node{
		node("k1", map[string]string{protocol.AdoptionTargetAnnotation: target, protocol.AdoptionAnnotation: protocol.AdoptionPending, protocol.AdoptionPlanAnnotation: plan}),
		node("k2", map[string]string{protocol.AdoptionTargetAnnotation: target}),
		node("k3", map[string]string{protocol.AdoptionTargetAnnotation: target, protocol.AdoptionAnnotation: protocol.AdoptionPending, protocol.AdoptionPlanAnnotation: plan,
			protocol.AdoptAnnotation: protocol.AdoptApproved}),
	}
	var out bytes.Buffer
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{*worker}, nil), Nodes([]mcfgv1.MachineConfigPool{*worker}, nodes)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"NodesAwaitingAdoption: Node k1: adopting into rendered-worker-new would write 1 file",
		"k1    worker  -        -        -      adoption  adopting into rendered-worker-new would write 1 file (/etc/chrony.conf), drain, then reboot; approve with `mco adopt k1`",
		"k2    worker  -        -        -      joining   -",
		"k3    worker  -        -        -      adoption  approved, waiting for room in its pool: adopting into",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	frame := RolloutFrame(worker, Nodes([]mcfgv1.MachineConfigPool{*worker}, nodes), Pacing{}, time.Time{})
	if !strings.Contains(frame, "0/0 nodes updated") || !strings.Contains(frame, "k1                       adoption: adopting into") ||
		!strings.Contains(frame, "k2                       joining") {
		t.Errorf("frame (nodes the pool does not count are listed, not counted):\n%s", frame)
	}
}
