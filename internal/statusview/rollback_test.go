package statusview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// A pool held by a rollback says so in `mco status` (its pool line: the RolledBack condition
// and the policy's RolledBack phase) and in `mco rollout status` (a line under the pool's).
func TestRolledBackPool(t *testing.T) {
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	const held = "held on rendered-worker-a: rendered-worker-b was rolled back by mco rollout undo: undone by an admin; it moves forward when its MachineConfigs change or on `mco rollout resume mcp/worker`"
	worker.Spec.Configuration.Name, worker.Status.Configuration.Name = "rendered-worker-a", "rendered-worker-a"
	worker.Status.MachineCount, worker.Status.UpdatedMachineCount = 1, 1
	worker.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{
		{Type: mcfgv1.MachineConfigPoolUpdated, Status: corev1.ConditionTrue},
		{Type: poolcondition.RolledBack, Status: corev1.ConditionTrue, Reason: "RolledBack", Message: held},
	}
	nodes := []corev1.Node{node("w1", map[string]string{protocol.CurrentConfigAnnotation: "rendered-worker-a", protocol.DesiredConfigAnnotation: "rendered-worker-a", protocol.StateAnnotation: "Done"})}
	policy := rolloutv1.MachineConfigPoolRollout{Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{MatchLabels: worker.Labels}}}
	policy.Name = "workers"
	policy.Status.Pools = []rolloutv1.PoolRolloutStatus{{Name: "worker", Target: "rendered-worker-a", Phase: rolloutv1.PhaseRolledBack, Reason: held + "; all 1 node updated"}}
	policies := []rolloutv1.MachineConfigPoolRollout{policy}

	var out bytes.Buffer
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{*worker}, policies), Nodes([]mcfgv1.MachineConfigPool{*worker}, nodes)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RolledBack  Updated; RolledBack: " + held} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("mco status lacks %q:\n%s", want, out.String())
		}
	}
	frame := RolloutFrame(worker, Nodes([]mcfgv1.MachineConfigPool{*worker}, nodes), PoolPacing(policies, worker), time.Time{})
	if !strings.Contains(frame, "pool worker -> rendered-worker-a\nRolledBack: "+held+"\n") || !strings.Contains(frame, "paced by mcprollout/workers: RolledBack (held on") {
		t.Errorf("mco rollout status frame:\n%s", frame)
	}
	worker.Status.Conditions[1].Status = corev1.ConditionFalse
	if RolledBack(worker) != "" {
		t.Error("a hold that ended is still shown")
	}
}
