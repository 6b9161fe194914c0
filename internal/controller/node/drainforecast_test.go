package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// Nodes left waiting are tainted only where moving them may drain them, as their agent would
// plan the move over the two rendered configs and the default disruption policies.
func TestWaitingNodesTaintedOnlyWhereTheMoveMayDrain(t *testing.T) {
	testenv.Integration(t)
	for _, tc := range []struct {
		role, path string
		taint      bool
	}{
		{"forecast-reload", "/etc/containers/policy.json", false}, // default policy: reload crio, no drain
		{"forecast-reboot", "/etc/forecast.conf", true},           // no policy covers it: drain and reboot
	} {
		t.Run(tc.role, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			oldCfg, newCfg := "rendered-"+tc.role+"-old", "rendered-"+tc.role+"-new"
			createRendered(t, ctx, oldCfg, tc.path, "old")
			createRendered(t, ctx, newCfg, tc.path, "new")
			one := intstr.FromInt32(1)
			newPool(t, ctx, tc.role, tc.role, oldCfg, &one)
			nodes := createNodes(t, ctx, tc.role, 3, oldCfg, map[string]string{roleLabel(tc.role): ""})
			waitPool(t, ctx, tc.role, "initial Updated", 30*time.Second, updatedTo(oldCfg, 3))

			// Whichever node the controller starts fails, so the rollout holds with the other two
			// left waiting.
			for _, n := range nodes {
				agent.Fail(n, "held for the test")
				defer agent.Heal(n)
			}
			setTarget(t, ctx, tc.role, newCfg)
			waitPool(t, ctx, tc.role, "one node Degraded", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
				return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded)
			})
			waiting := 0
			for _, name := range nodes {
				n := getNode(t, ctx, name)
				if n.Annotations[protocol.DesiredConfigAnnotation] == newCfg {
					if hasUpdateTaint(n) {
						t.Errorf("node %s, targeted, still tainted", name)
					}
					continue
				}
				waiting++
				if hasUpdateTaint(n) != tc.taint {
					t.Errorf("waiting node %s: tainted %v, want %v (a change of %s)", name, hasUpdateTaint(n), tc.taint, tc.path)
				}
			}
			if waiting != 2 {
				t.Errorf("%d nodes waiting, want 2", waiting)
			}
		})
	}
}

// createRendered creates a rendered config holding one file.
func createRendered(t *testing.T, ctx context.Context, name, path, content string) {
	t.Helper()
	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"contents":{"source":"data:,%s"},"mode":420}]}}`, path, content))}},
	}
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), mc) })
}
