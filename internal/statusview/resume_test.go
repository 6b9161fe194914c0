package statusview

import (
	"slices"
	"strings"
	"testing"
	"time"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

func TestPlanResume(t *testing.T) {
	finished := at(now.Add(-time.Minute))
	canaryHold := rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1, BatchFinishedAt: finished, NodesDone: 1, NodesRemaining: 4,
		Reason: "canary done: waiting for `mco rollout resume`"}
	canaryRunning := rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1, Reason: "canary: 0/1 updated; 1 node still updating"}
	progressing := rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseProgressing, Batch: 2, Reason: "batch 2: 1 node still updating"}
	infraSoaking := rolloutv1.PoolRolloutStatus{Name: "infra", Phase: rolloutv1.PhaseSoaking, Batch: 2, BatchFinishedAt: finished, Reason: "soaking batch 2 until 14:05; 3/7 updated"}
	window := rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseWaitingForWindow, Reason: "waiting for window Sat 02:00 UTC (in 10h7m)"}
	for _, tc := range []struct {
		name  string
		pools []rolloutv1.PoolRolloutStatus
		pool  string
		force bool
		lines []string // set the marker and print these
		err   string   // or refuse with this error
	}{
		{name: "canary hold, by pool", pools: []rolloutv1.PoolRolloutStatus{canaryHold}, pool: "worker",
			lines: []string{"resumed mcprollout/workers: pool worker was Canary (canary done: waiting for `mco rollout resume`)"}},
		{name: "canary hold, by policy", pools: []rolloutv1.PoolRolloutStatus{canaryHold},
			lines: []string{"resumed mcprollout/workers: pool worker was Canary (canary done: waiting for `mco rollout resume`)"}},
		{name: "soak, by policy, with a pool holding nothing", pools: []rolloutv1.PoolRolloutStatus{infraSoaking, progressing},
			lines: []string{"resumed mcprollout/workers: pool infra was Soaking (soaking batch 2 until 14:05; 3/7 updated)"}},
		{name: "the named pool's resume releases the other pool too", pools: []rolloutv1.PoolRolloutStatus{infraSoaking, canaryHold}, pool: "worker",
			lines: []string{
				"resumed mcprollout/workers: pool infra was Soaking (soaking batch 2 until 14:05; 3/7 updated)",
				"resumed mcprollout/workers: pool worker was Canary (canary done: waiting for `mco rollout resume`)"}},
		{name: "canary still updating: a resume now would be spent", pools: []rolloutv1.PoolRolloutStatus{canaryRunning}, pool: "worker",
			err: "no hold to release now: pool worker is Canary (canary: 0/1 updated; 1 node still updating); a resume ends a canary or soak hold once the batch finished, and one given before is spent (--force sets it anyway)"},
		{name: "canary short of its size holds nothing", pools: []rolloutv1.PoolRolloutStatus{{Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1,
			BatchFinishedAt: finished, NodesDone: 1, NodesRemaining: 19, Reason: "canary: starting 1 node"}}, pool: "worker",
			err: "no hold to release now: pool worker is Canary (canary: starting 1 node)"},
		{name: "progressing", pools: []rolloutv1.PoolRolloutStatus{progressing},
			err: "no hold to release now: pool worker is Progressing (batch 2: 1 node still updating); a resume ends"},
		{name: "a window is no hold", pools: []rolloutv1.PoolRolloutStatus{window}, pool: "worker",
			err: "no hold to release now: pool worker is WaitingForWindow (waiting for window Sat 02:00 UTC (in 10h7m))"},
		{name: "forced while progressing", pools: []rolloutv1.PoolRolloutStatus{progressing}, pool: "worker", force: true,
			lines: []string{"resumed mcprollout/workers (--force): no hold to release now: pool worker is Progressing (batch 2: 1 node still updating); the marker only ends the hold of a batch that finished before it"}},
		{name: "named pool holds nothing, another does", pools: []rolloutv1.PoolRolloutStatus{infraSoaking, progressing}, pool: "worker",
			err: "no hold to release now: pool worker is Progressing (batch 2: 1 node still updating); mcprollout/workers also holds pool infra, which this resume would release: run `mco rollout resume mcprollout/workers` for that"},
		{name: "forced: says what it releases elsewhere", pools: []rolloutv1.PoolRolloutStatus{infraSoaking, progressing}, pool: "worker", force: true,
			lines: []string{
				"resumed mcprollout/workers (--force): no hold to release now: pool worker is Progressing (batch 2: 1 node still updating); the marker only ends the hold of a batch that finished before it",
				"resumed mcprollout/workers: pool infra was Soaking (soaking batch 2 until 14:05; 3/7 updated)"}},
		{name: "named pool not decided yet", pools: []rolloutv1.PoolRolloutStatus{}, pool: "worker",
			err: "no hold to release now: mcprollout/workers has no decision for pool worker yet; a resume ends"},
		{name: "policy with no status", err: "no hold to release now: mcprollout/workers has no decision for any pool yet; a resume ends"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := workersPolicy(0, tc.pools...)
			plan, err := PlanResume(&policy, tc.pool, tc.force)
			switch {
			case tc.err != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) || plan.Set {
					t.Fatalf("plan %+v, error %v; want no marker and an error starting %q", plan, err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case !plan.Set || !slices.Equal(plan.Lines, tc.lines):
				t.Errorf("set %v, lines:\n%s\nwant:\n%s", plan.Set, strings.Join(plan.Lines, "\n"), strings.Join(tc.lines, "\n"))
			}
		})
	}
}
