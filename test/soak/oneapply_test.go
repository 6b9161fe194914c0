package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestOneApplySoak is issue 37's unfinished rollout, MCO_SOAK_ROUNDS times (default 20): a
// fresh dev cluster of 3 workers, one `kubectl apply` of five MachineConfigs (three files, a
// unit, a kernel argument), the pool Updated with each machine booted once
// (clustertest.OneApplyOneReboot). A round that fails records the cluster's state; the rounds
// go on, and the test reports how many failed and the rollout times of the others.
func TestOneApplySoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: needs dev clusters, real machines and the real binaries")
	}
	rounds := 20
	if v := os.Getenv("MCO_SOAK_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MCO_SOAK_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	out := os.Getenv("MCO_SOAK_DIR")
	if out == "" {
		out = filepath.Join(os.TempDir(), "mco-soak")
	}
	workers := []string{"worker-0", "worker-1", "worker-2"}
	var took []time.Duration
	failed := 0
	for r := 1; r <= rounds; r++ {
		ok := t.Run(fmt.Sprintf("round %d", r), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			cl := clustertest.Start(t, ctx, len(workers))
			// Registered after Start's teardown, so it runs first: the cluster is still up.
			t.Cleanup(func() {
				if t.Failed() {
					cl.RecordState(t, filepath.Join(out, fmt.Sprintf("round-%d", r)), append([]string{"master-0"}, workers...))
				}
			})
			d := cl.OneApplyOneReboot(t, ctx, workers)
			if !t.Failed() {
				took = append(took, d)
				t.Logf("round %d: rolled out in %s", r, d.Round(100*time.Millisecond))
			}
		})
		if !ok {
			failed++
		}
	}
	slices.Sort(took)
	if len(took) > 0 {
		t.Logf("%d of %d rounds rolled out: min %s, median %s, max %s", len(took), rounds,
			took[0].Round(100*time.Millisecond), took[len(took)/2].Round(100*time.Millisecond), took[len(took)-1].Round(100*time.Millisecond))
	}
	if failed > 0 {
		t.Errorf("%d of %d rounds failed (their state: %s)", failed, rounds, out)
	}
}
