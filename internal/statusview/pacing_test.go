package statusview

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

var now = time.Date(2026, 6, 12, 13, 53, 0, 0, time.UTC) // a Friday

func at(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func workersPolicy(soak time.Duration, pools ...rolloutv1.PoolRolloutStatus) rolloutv1.MachineConfigPoolRollout {
	return rolloutv1.MachineConfigPoolRollout{
		ObjectMeta: metav1.ObjectMeta{Name: "workers"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
			Soak:         metav1.Duration{Duration: soak},
			Canary:       &rolloutv1.Canary{Nodes: intstr.FromString("10%")},
		},
		Status: rolloutv1.MachineConfigPoolRolloutStatus{Pools: pools},
	}
}

func TestPoolPacing(t *testing.T) {
	worker := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"role": "worker"}}}
	finished := at(now.Add(-18 * time.Minute))
	canaryHold := rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1, BatchFinishedAt: finished, NodesDone: 2, NodesRemaining: 9,
		Reason: "canary done: waiting for `mco rollout resume` or soak (12m left)"}
	for _, tc := range []struct {
		name     string
		policies []rolloutv1.MachineConfigPoolRollout
		column   string
		lines    []string
	}{
		{name: "no policy", column: "-"},
		{name: "policy selects another pool", column: "-", policies: []rolloutv1.MachineConfigPoolRollout{func() rolloutv1.MachineConfigPoolRollout {
			p := workersPolicy(0)
			p.Spec.PoolSelector.MatchLabels["role"] = "infra"
			return p
		}()}},
		{name: "not decided yet", column: "undecided", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, rolloutv1.PoolRolloutStatus{Name: "infra", Phase: rolloutv1.PhaseDone})},
			lines: []string{"paced by mcprollout/workers: no decision for pool worker yet"}},
		{name: "two policies", column: "conflict (2 policies)", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0), func() rolloutv1.MachineConfigPoolRollout {
			p := workersPolicy(0)
			p.Name = "all"
			return p
		}()}, lines: []string{"not paced: pool worker is selected by mcprollout/all and mcprollout/workers: no node starts until only one selects it"}},
		{name: "canary hold with a soak", column: "Canary", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(30*time.Minute, canaryHold)}, lines: []string{
			"paced by mcprollout/workers: Canary (canary done: waiting for `mco rollout resume` or soak (12m left))",
			"next batch: at Fri 14:05 UTC (in 12m) when the soak ends, or on `mco rollout resume mcp/worker`"}},
		{name: "canary hold without a soak", column: "Canary", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, canaryHold)}, lines: []string{
			"paced by mcprollout/workers: Canary (canary done: waiting for `mco rollout resume` or soak (12m left))",
			"next batch: on `mco rollout resume mcp/worker`"}},
		{name: "canary batch still updating", column: "Canary", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(30*time.Minute, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1, Reason: "canary: 0/1 updated; 1 node still updating"})}, lines: []string{
			"paced by mcprollout/workers: Canary (canary: 0/1 updated; 1 node still updating)"}},
		{name: "canary short of its size: maxUnavailable let fewer start", column: "Canary", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(30*time.Minute, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseCanary, Batch: 1, BatchFinishedAt: finished, NodesDone: 1, NodesRemaining: 10, Reason: "canary: starting 1 node"})}, lines: []string{
			"paced by mcprollout/workers: Canary (canary: starting 1 node)"}},
		{name: "soaking", column: "Soaking", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(time.Hour, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseSoaking, Batch: 2, BatchFinishedAt: finished, Reason: "soaking batch 2 until 14:35; 3/7 updated"})}, lines: []string{
			"paced by mcprollout/workers: Soaking (soaking batch 2 until 14:35; 3/7 updated)",
			"next batch: at Fri 14:35 UTC (in 42m) when the soak ends, or on `mco rollout resume mcp/worker`"}},
		{name: "soak over, controller not yet acted", column: "Soaking", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(10*time.Minute, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseSoaking, Batch: 2, BatchFinishedAt: finished})}, lines: []string{
			"paced by mcprollout/workers: Soaking",
			"next batch: now: the soak ended at Fri 13:45 UTC"}},
		{name: "waiting for a window", column: "WaitingForWindow", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseWaitingForWindow, NextWindowStart: at(time.Date(2026, 6, 13, 0, 0, 0, 0, time.UTC)),
			Reason: "waiting for window Sat 02:00 Europe/Berlin (in 10h7m)"})}, lines: []string{
			"paced by mcprollout/workers: WaitingForWindow (waiting for window Sat 02:00 Europe/Berlin (in 10h7m))",
			"next batch: at Sat 00:00 UTC (in 10h7m) when the maintenance window opens"}},
		{name: "paused by spec", column: "Paused", policies: []rolloutv1.MachineConfigPoolRollout{func() rolloutv1.MachineConfigPoolRollout {
			p := workersPolicy(0, rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhasePaused, Reason: "paused by spec.paused"})
			p.Spec.Paused = true
			return p
		}()}, lines: []string{"paced by mcprollout/workers: Paused (paused by spec.paused)", "next batch: none until mcprollout/workers's spec.paused is false"}},
		{name: "paused by the health gate", column: "Paused", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhasePaused, Reason: "paused: node w-3 not Ready since 13:40"})}, lines: []string{
			"paced by mcprollout/workers: Paused (paused: node w-3 not Ready since 13:40)",
			"next batch: none until the cause above is resolved"}},
		{name: "progressing", column: "Progressing", policies: []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, rolloutv1.PoolRolloutStatus{
			Name: "worker", Phase: rolloutv1.PhaseProgressing, Reason: "batch 1: up to 3 nodes may start"})}, lines: []string{
			"paced by mcprollout/workers: Progressing (batch 1: up to 3 nodes may start)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PoolPacing(tc.policies, worker)
			if got := p.Column(); got != tc.column {
				t.Errorf("column %q, want %q", got, tc.column)
			}
			if got := p.Lines(now); !slices.Equal(got, tc.lines) {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
			}
		})
	}
}

func selectorPolicy(name string, sel *metav1.LabelSelector) rolloutv1.MachineConfigPoolRollout {
	return rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: sel}}
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

// PolicyFor follows the controller's rule (pacing.Selecting); these pin what the CLI relies on.
func TestPolicyFor(t *testing.T) {
	worker := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pacing": "slow", "role": "worker"}}}
	inWorker := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", "infra"}}}}
	for _, tc := range []struct {
		name      string
		policies  []rolloutv1.MachineConfigPoolRollout
		want      string
		conflicts []string
	}{
		{name: "no policies"},
		{name: "matchLabels selects", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("infra", matchLabels("role", "infra")), selectorPolicy("slow", matchLabels("pacing", "slow"))}, want: "slow"},
		{name: "matchExpressions selects", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("expr", inWorker)}, want: "expr"},
		{name: "a label the pool lacks", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("both", matchLabels("pacing", "slow", "zone", "a"))}},
		{name: "no selector selects none", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("nil", nil)}},
		{name: "empty selector selects every pool", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("empty", &metav1.LabelSelector{}), selectorPolicy("nil", nil)}, want: "empty"},
		{name: "invalid selector selects none", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("bad", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Near"}}})}},
		{name: "two select", policies: []rolloutv1.MachineConfigPoolRollout{selectorPolicy("zeta", matchLabels("role", "worker")), selectorPolicy("infra", matchLabels("role", "infra")), selectorPolicy("alpha", inWorker)},
			conflicts: []string{"alpha", "zeta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PolicyFor(tc.policies, worker)
			var conflict *ConflictError
			switch {
			case tc.conflicts != nil:
				if !errors.As(err, &conflict) || conflict.Policies != len(tc.conflicts) || got != nil {
					t.Fatalf("got %v, %v; want a conflict of %v", got, err, tc.conflicts)
				}
				const msg = "pool worker is selected by mcprollout/alpha and mcprollout/zeta: no node starts until only one selects it"
				if err.Error() != msg {
					t.Errorf("error %q, want %q", err, msg)
				}
			case err != nil:
				t.Fatal(err)
			case tc.want == "" && got != nil:
				t.Fatalf("got mcprollout/%s, want none", got.Name)
			case tc.want != "" && (got == nil || got.Name != tc.want):
				t.Fatalf("got %v, want mcprollout/%s", got, tc.want)
			}
		})
	}
}

func TestPausedPoolSaysWhichSpec(t *testing.T) {
	worker := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"role": "worker"}}}
	worker.Spec.Paused = true
	policy := workersPolicy(0, rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhasePaused, Reason: "the MachineConfigPool is paused (its spec.paused)"})
	if got, want := PoolPacing([]rolloutv1.MachineConfigPoolRollout{policy}, worker).NextBatch(now), "none until mcp/worker's spec.paused is false"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The reader's clock zone, not the controller's UTC, shows the times.
func TestNextBatchInReadersZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	p := Pacing{Pool: "worker", Policy: "workers", Decided: true, Spec: rolloutv1.MachineConfigPoolRolloutSpec{Soak: metav1.Duration{Duration: 30 * time.Minute}},
		Status: rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseSoaking, BatchFinishedAt: at(now.Add(-5 * time.Minute))}}
	if got, want := p.NextBatch(now.In(berlin)), "at Fri 16:18 CEST (in 25m) when the soak ends, or on `mco rollout resume mcp/worker`"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPoolsTablePacingColumn(t *testing.T) {
	worker := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"role": "worker"}}}
	master := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "master"}}
	policies := []rolloutv1.MachineConfigPoolRollout{workersPolicy(0, rolloutv1.PoolRolloutStatus{Name: "worker", Phase: rolloutv1.PhaseSoaking})}
	var out strings.Builder
	if err := WriteTables(&out, Pools([]mcfgv1.MachineConfigPool{worker, master}, policies), nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if strings.Fields(lines[0])[6] != "PACING" || !strings.Contains(lines[1], "master") || !strings.Contains(lines[2], "worker") {
		t.Fatalf("table:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); f[6] != "-" {
		t.Errorf("master's pacing %q, want -", f[6])
	}
	if f := strings.Fields(lines[2]); f[6] != "Soaking" {
		t.Errorf("worker's pacing %q, want Soaking", f[6])
	}
}
