package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestFromASettledPool runs, on one cluster of three workers, the tests that each measure one
// change from a settled worker pool: every step starts with the pool Updated and leaves it so,
// with what it added that would change a later step (a pacing policy, a workload) removed. One
// cluster instead of six saves five boots of about 30 s. The custom pool's join comes last: it adds a
// machine and a pool, which `mco plan` and the worker counts of the steps before would see.
// A step that fails stops the suite, as the next one would start from a state it did not reach.
func TestFromASettledPool(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	workers := []string{"worker-0", "worker-1", "worker-2"}
	cl := clustertest.Start(t, ctx, len(workers))
	for _, step := range []struct {
		name string
		run  func(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string)
	}{
		{"one apply, one reboot", oneApplyOneReboot},
		{"mco plan against what the agent does", planAgainstAgent},
		{"mco diagnose", diagnoseBundle},
		{"paced rollout", pacedRollout},
		{"the drain keeps the workload", drainKeepsTheWorkload},
		{"custom pool from first boot", customPoolFromFirstBoot},
		{"pods kept off the config server", podsKeptOffTheServer},
	} {
		if !t.Run(step.name, func(t *testing.T) { step.run(t, ctx, cl, workers) }) {
			t.Fatalf("stopping after %q: the next steps start from a settled pool", step.name)
		}
	}
}
