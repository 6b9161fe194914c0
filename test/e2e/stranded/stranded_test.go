package stranded

import (
	"context"
	"testing"
	"time"

	"github.com/mco-dev/mco/test/clustertest"
)

// strandedScenario is one of issue 34's scenarios ("never stranded"). Each starts from the
// worker pool Updated with every node Done, and must leave it so (its MachineConfigs,
// policies and annotations removed), so the next one can run on the same cluster: four
// clusters would cost the suite minutes of boots for nothing.
type strandedScenario struct {
	name string
	run  func(t *testing.T, ctx context.Context, cl *clustertest.Cluster)
}

// strandedScenarios run in this order, each from where the one before left the cluster.
var strandedScenarios = []strandedScenario{
	{"hold and priority", holdAndPriority},                             // hold_test.go
	{"blocked drain skips then deletes", blockedDrainSkipsThenDeletes}, // drain_test.go
	{"rollout undo", rolloutUndo},                                      // undo_test.go
	{"planted links", plantedLinks},                                    // plantedlinks_test.go
	{"broken kubelet reverts", brokenKubeletReverts},                   // boot_test.go
	{"broken kubelet rolls the pool back", brokenKubeletRollsBack},     // boot_test.go
}

// TestNeverStranded: holds and priorities, blocked drains, undone rollouts, links planted on
// the hosts and a config that breaks the kubelet, on real machines with real kubelets, one
// cluster of three workers.
func TestNeverStranded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cl := clustertest.Start(t, ctx, 3)
	for _, s := range strandedScenarios {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, ctx, cl) }) {
			return // the cluster is in an unknown state: later scenarios would fail for it
		}
	}
}
