package statusview

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// TestPausedPoolShowsWhatUnpausingDoes: `mco status` prints the unpause plan controller's
// message next to Paused, and not once the condition is False.
func TestPausedPoolShowsWhatUnpausingDoes(t *testing.T) {
	pool := mcfgv1.MachineConfigPool{}
	pool.Name, pool.Spec.Paused = "worker", true
	pool.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{
		Type: poolcondition.PendingUpdate, Status: corev1.ConditionTrue, Reason: "DrainAndReboot",
		Message: "unpausing reboots 3 nodes: kernel argument audit=1",
	}}
	var out strings.Builder
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{pool}, nil), nil); err != nil {
		t.Fatal(err)
	}
	if want := "PendingUpdate: unpausing reboots 3 nodes: kernel argument audit=1; Paused"; !strings.Contains(out.String(), want) {
		t.Errorf("mco status of a paused pool lacks %q:\n%s", want, out.String())
	}

	pool.Spec.Paused = false
	pool.Status.Conditions[0].Status, pool.Status.Conditions[0].Reason = corev1.ConditionFalse, "NotPaused"
	out.Reset()
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{pool}, nil), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "unpausing") {
		t.Errorf("mco status still shows the unpause plan after the pool was unpaused:\n%s", out.String())
	}
}
