package pacing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// The fake clock: every case decides at a fixed instant, a Saturday 14:00 UTC unless it says otherwise.
const now0 = "2026-06-13T14:00:00Z"

func pool(updated, updating, pending int) []NodeState {
	var ns []NodeState
	add := func(n int, p Progress) {
		for range n {
			ns = append(ns, NodeState{Name: fmt.Sprintf("w-%d", len(ns)+1), Progress: p})
		}
	}
	add(updated, Updated)
	add(updating, Updating)
	add(pending, Pending)
	return ns
}

func policy(t *testing.T, edit func(*rolloutv1.MachineConfigPoolRolloutSpec)) Policy {
	t.Helper()
	spec := rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{}}
	if edit != nil {
		edit(&spec)
	}
	p, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func canary(n intstr.IntOrString) func(*rolloutv1.MachineConfigPoolRolloutSpec) {
	return func(s *rolloutv1.MachineConfigPoolRolloutSpec) { s.Canary = &rolloutv1.Canary{Nodes: n} }
}

func soak(d time.Duration, also ...func(*rolloutv1.MachineConfigPoolRolloutSpec)) func(*rolloutv1.MachineConfigPoolRolloutSpec) {
	return func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.Soak = metav1.Duration{Duration: d}
		for _, f := range also {
			f(s)
		}
	}
}

func windows(ws ...rolloutv1.MaintenanceWindow) func(*rolloutv1.MachineConfigPoolRolloutSpec) {
	return func(s *rolloutv1.MachineConfigPoolRolloutSpec) { s.MaintenanceWindows = ws }
}

func TestDecide(t *testing.T) {
	base, _ := time.Parse(time.RFC3339, now0)
	ago := func(d time.Duration) time.Time { return base.Add(-d) }
	no := false
	berlinSat := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sat"}, Start: "02:00", Duration: dur(4 * time.Hour), TimeZone: "Europe/Berlin"}
	friNight := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Fri"}, Start: "22:00", End: "02:00"}
	springEnd := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sun"}, Start: "01:00", End: "05:00", TimeZone: "Europe/Berlin"}

	cases := []struct {
		name   string
		spec   func(*rolloutv1.MachineConfigPoolRolloutSpec)
		state  State
		now    string // default now0
		edit   func([]NodeState)
		want   Decision
		reason string // exact; checked instead of want.Reason
	}{
		{name: "zero nodes", spec: canary(intstr.FromInt32(1)),
			want: Decision{Phase: rolloutv1.PhaseIdle}, reason: "pool has no nodes"},
		{name: "all updated", state: State{Nodes: pool(3, 0, 0), BatchFinishedAt: ago(time.Hour), Batch: 2},
			want: Decision{BatchFinishedAt: ago(time.Hour), Phase: rolloutv1.PhaseDone, Batch: 2, NodesDone: 3}, reason: "all 3 nodes updated"},
		{name: "no pacing: everything may start", state: State{Nodes: pool(0, 1, 4)},
			want:   Decision{Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, NodesRemaining: 5},
			reason: "batch 1: up to 4 nodes may start; 1 node still updating"},
		{name: "canary starts", spec: canary(intstr.FromInt32(1)), state: State{Nodes: pool(0, 0, 5)},
			want: Decision{Start: 1, Batch: 1, Phase: rolloutv1.PhaseCanary, NodesRemaining: 5}, reason: "canary: starting 1 node"},
		{name: "canary percent rounds up", spec: canary(intstr.FromString("15%")), state: State{Nodes: pool(0, 0, 10)},
			want: Decision{Start: 2, Batch: 1, Phase: rolloutv1.PhaseCanary, NodesRemaining: 10}, reason: "canary: starting 2 nodes"},
		{name: "canary tops up what maxUnavailable held back", spec: canary(intstr.FromInt32(3)), state: State{Nodes: pool(0, 2, 8), Batch: 1},
			want: Decision{Start: 1, Batch: 1, Phase: rolloutv1.PhaseCanary, NodesRemaining: 10}, reason: "canary: starting 1 node; 2 nodes still updating"},
		{name: "canary updating", spec: canary(intstr.FromInt32(1)), state: State{Nodes: pool(0, 1, 4), Batch: 1},
			want: Decision{Batch: 1, Phase: rolloutv1.PhaseCanary, NodesRemaining: 5}, reason: "canary: 0/1 updated; 1 node still updating"},
		{name: "canary done, soaking", spec: soak(30*time.Minute, canary(intstr.FromInt32(1))), state: State{Nodes: pool(1, 0, 4), BatchFinishedAt: ago(18 * time.Minute), Batch: 1},
			want:   Decision{BatchFinishedAt: ago(18 * time.Minute), Held: true, Batch: 1, Phase: rolloutv1.PhaseCanary, RequeueAfter: 12 * time.Minute, NodesDone: 1, NodesRemaining: 4},
			reason: "canary done: waiting for `mco rollout resume` or soak (12m left)"},
		{name: "canary done without soak waits for resume only", spec: canary(intstr.FromInt32(1)), state: State{Nodes: pool(1, 0, 4), BatchFinishedAt: ago(5 * time.Hour), Batch: 1},
			want:   Decision{BatchFinishedAt: ago(5 * time.Hour), Held: true, Batch: 1, Phase: rolloutv1.PhaseCanary, NodesDone: 1, NodesRemaining: 4},
			reason: "canary done: waiting for `mco rollout resume`"},
		{name: "resume ends the canary hold", spec: soak(30*time.Minute, canary(intstr.FromInt32(1))),
			state: State{Nodes: pool(1, 0, 4), BatchFinishedAt: ago(18 * time.Minute), Batch: 1, ResumedAt: ago(time.Minute)},
			want:  Decision{BatchFinishedAt: ago(18 * time.Minute), Start: 4, Batch: 2, Phase: rolloutv1.PhaseProgressing, NodesDone: 1, NodesRemaining: 4}, reason: "batch 2: up to 4 nodes may start"},
		{name: "a resume from before the canary finished is spent", spec: canary(intstr.FromInt32(1)),
			state: State{Nodes: pool(1, 0, 4), BatchFinishedAt: ago(18 * time.Minute), Batch: 1, ResumedAt: ago(time.Hour)},
			want:  Decision{BatchFinishedAt: ago(18 * time.Minute), Held: true, Batch: 1, Phase: rolloutv1.PhaseCanary, NodesDone: 1, NodesRemaining: 4}, reason: "canary done: waiting for `mco rollout resume`"},
		{name: "canary soak passed healthy", spec: soak(30*time.Minute, canary(intstr.FromInt32(1))), state: State{Nodes: pool(1, 0, 4), BatchFinishedAt: ago(30 * time.Minute), Batch: 1},
			want: Decision{BatchFinishedAt: ago(30 * time.Minute), Start: 4, Batch: 2, Phase: rolloutv1.PhaseProgressing, NodesDone: 1, NodesRemaining: 4}, reason: "batch 2: up to 4 nodes may start"},
		{name: "batch updating: no new starts", spec: soak(30 * time.Minute), state: State{Nodes: pool(1, 2, 4), BatchFinishedAt: ago(time.Hour), Batch: 2},
			want: Decision{Batch: 2, Phase: rolloutv1.PhaseProgressing, NodesDone: 1, NodesRemaining: 6}, reason: "batch 2: 2 nodes still updating"},
		{name: "soaking batch", spec: soak(30 * time.Minute), state: State{Nodes: pool(3, 0, 4), BatchFinishedAt: ago(25 * time.Minute), Batch: 2},
			want:   Decision{BatchFinishedAt: ago(25 * time.Minute), Held: true, Batch: 2, Phase: rolloutv1.PhaseSoaking, RequeueAfter: 5 * time.Minute, NodesDone: 3, NodesRemaining: 4},
			reason: "soaking batch 2 until 14:05; 3/7 updated"},
		{name: "resume ends a soak", spec: soak(30 * time.Minute), state: State{Nodes: pool(3, 0, 4), BatchFinishedAt: ago(25 * time.Minute), Batch: 2, ResumedAt: base},
			want: Decision{BatchFinishedAt: ago(25 * time.Minute), Start: 4, Batch: 3, Phase: rolloutv1.PhaseProgressing, NodesDone: 3, NodesRemaining: 4}, reason: "batch 3: up to 4 nodes may start"},
		{name: "soak passed healthy: next batch", spec: soak(30 * time.Minute), state: State{Nodes: pool(3, 0, 4), BatchFinishedAt: ago(31 * time.Minute), Batch: 2},
			want: Decision{BatchFinishedAt: ago(31 * time.Minute), Start: 4, Batch: 3, Phase: rolloutv1.PhaseProgressing, NodesDone: 3, NodesRemaining: 4}, reason: "batch 3: up to 4 nodes may start"},
		{name: "gate: updated node not Ready pauses, naming it", spec: soak(30 * time.Minute), state: State{Nodes: pool(3, 0, 4), BatchFinishedAt: ago(31 * time.Minute), Batch: 2},
			edit: func(ns []NodeState) { ns[2].NotReady, ns[2].NotReadySince = true, ago(2*time.Minute) },
			want: Decision{BatchFinishedAt: ago(31 * time.Minute), Held: true, Batch: 2, Phase: rolloutv1.PhasePaused, NodesDone: 3, NodesRemaining: 4, GateFailed: "node w-3 not Ready since 13:58"}, reason: "paused: node w-3 not Ready since 13:58"},
		{name: "gate: started nodes still finish while paused", state: State{Nodes: pool(2, 1, 4), BatchFinishedAt: ago(time.Hour), Batch: 1},
			edit:   func(ns []NodeState) { ns[0].NotReady, ns[1].NotReady = true, true },
			want:   Decision{Held: true, Batch: 1, Phase: rolloutv1.PhasePaused, NodesDone: 2, NodesRemaining: 5, GateFailed: "node w-1 not Ready (and 1 more)"},
			reason: "paused: node w-1 not Ready (and 1 more); 1 node still updating"},
		{name: "gate: DaemonSet pod not Ready", state: State{Nodes: pool(2, 0, 4), BatchFinishedAt: ago(time.Hour), Batch: 1},
			edit: func(ns []NodeState) {
				ns[1].UnreadyDaemonSetPods = []string{"openshift-sdn/sdn-x", "openshift-dns/dns-default-x"}
			},
			want:   Decision{BatchFinishedAt: ago(time.Hour), Held: true, Batch: 1, Phase: rolloutv1.PhasePaused, NodesDone: 2, NodesRemaining: 4, GateFailed: "node w-2 DaemonSet pod openshift-dns/dns-default-x not Ready"},
			reason: "paused: node w-2 DaemonSet pod openshift-dns/dns-default-x not Ready"},
		{name: "gate: DaemonSet check off", spec: func(s *rolloutv1.MachineConfigPoolRolloutSpec) { s.HealthGate.DaemonSetPodsReady = &no },
			state: State{Nodes: pool(2, 0, 4), BatchFinishedAt: ago(time.Hour), Batch: 1},
			edit:  func(ns []NodeState) { ns[1].UnreadyDaemonSetPods = []string{"openshift-dns/dns-default-x"} },
			want:  Decision{BatchFinishedAt: ago(time.Hour), Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, NodesDone: 2, NodesRemaining: 4}, reason: "batch 1: up to 4 nodes may start"},
		{name: "gate: a pending node's health is maxUnavailable's business", state: State{Nodes: pool(2, 0, 4), BatchFinishedAt: ago(time.Hour), Batch: 1},
			edit: func(ns []NodeState) { ns[5].NotReady = true },
			want: Decision{BatchFinishedAt: ago(time.Hour), Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, NodesDone: 2, NodesRemaining: 4}, reason: "batch 1: up to 4 nodes may start"},
		{name: "the pool's own spec.paused", spec: canary(intstr.FromInt32(1)), state: State{Nodes: pool(0, 0, 4), PoolPaused: true},
			want: Decision{Held: true, Phase: rolloutv1.PhasePaused, NodesRemaining: 4}, reason: "the MachineConfigPool is paused (its spec.paused)"},
		{name: "spec.paused", spec: func(s *rolloutv1.MachineConfigPoolRolloutSpec) { s.Paused = true }, state: State{Nodes: pool(0, 0, 4)},
			want: Decision{Held: true, Phase: rolloutv1.PhasePaused, NodesRemaining: 4}, reason: "paused by spec.paused"},
		{name: "outside window: waits, names it", spec: windows(berlinSat), now: "2026-06-12T20:48:00Z", state: State{Nodes: pool(0, 0, 4)},
			want:   Decision{Held: true, Phase: rolloutv1.PhaseWaitingForWindow, RequeueAfter: 3*time.Hour + 12*time.Minute, NextWindowStart: mustTime("2026-06-13T00:00:00Z"), NodesRemaining: 4},
			reason: "waiting for window Sat 02:00 Europe/Berlin (in 3h12m)"},
		{name: "outside window: started nodes finish", spec: windows(berlinSat), state: State{Nodes: pool(1, 2, 4), BatchFinishedAt: ago(time.Hour), Batch: 1},
			want:   Decision{Held: true, Batch: 1, Phase: rolloutv1.PhaseWaitingForWindow, RequeueAfter: 6*24*time.Hour + 10*time.Hour, NextWindowStart: mustTime("2026-06-20T00:00:00Z"), NodesDone: 1, NodesRemaining: 6},
			reason: "waiting for window Sat 02:00 Europe/Berlin (in 6d10h0m); 2 nodes still updating"},
		{name: "outside window: canary waits too", spec: soak(time.Hour, canary(intstr.FromInt32(1)), windows(berlinSat)), state: State{Nodes: pool(0, 0, 4)},
			want:   Decision{Held: true, Phase: rolloutv1.PhaseWaitingForWindow, RequeueAfter: 6*24*time.Hour + 10*time.Hour, NextWindowStart: mustTime("2026-06-20T00:00:00Z"), NodesRemaining: 4},
			reason: "waiting for window Sat 02:00 Europe/Berlin (in 6d10h0m)"},
		{name: "inside window: starts, looks again at its end", spec: windows(berlinSat), now: "2026-06-13T01:00:00Z", state: State{Nodes: pool(0, 0, 4)},
			want: Decision{Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, RequeueAfter: 3 * time.Hour, NodesRemaining: 4}, reason: "batch 1: up to 4 nodes may start"},
		{name: "window crossing midnight, after midnight", spec: windows(friNight), now: "2026-06-13T01:30:00Z", state: State{Nodes: pool(0, 0, 4)},
			want: Decision{Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, RequeueAfter: 30 * time.Minute, NodesRemaining: 4}, reason: "batch 1: up to 4 nodes may start"},
		{name: "window on the spring-forward night closes at 05:00 CEST", spec: windows(springEnd), now: "2026-03-29T02:30:00Z", state: State{Nodes: pool(0, 0, 4)},
			want: Decision{Start: 4, Batch: 1, Phase: rolloutv1.PhaseProgressing, RequeueAfter: 30 * time.Minute, NodesRemaining: 4}, reason: "batch 1: up to 4 nodes may start"},
		{name: "after the spring-forward window, the next is a CEST week later", spec: windows(springEnd), now: "2026-03-29T03:00:00Z", state: State{Nodes: pool(0, 0, 4)},
			want:   Decision{Held: true, Phase: rolloutv1.PhaseWaitingForWindow, RequeueAfter: 7*24*time.Hour - 4*time.Hour, NextWindowStart: mustTime("2026-04-04T23:00:00Z"), NodesRemaining: 4},
			reason: "waiting for window Sun 01:00 Europe/Berlin (in 6d20h0m)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := base
			if c.now != "" {
				now = mustTime(c.now)
			}
			if c.edit != nil {
				c.edit(c.state.Nodes)
			}
			got := Decide(policy(t, c.spec), c.state, now)
			if got.Reason != c.reason {
				t.Errorf("reason %q, want %q", got.Reason, c.reason)
			}
			got.Reason = ""
			if !got.NextWindowStart.Equal(c.want.NextWindowStart) {
				t.Errorf("next window %v, want %v", got.NextWindowStart, c.want.NextWindowStart)
			}
			got.NextWindowStart, c.want.NextWindowStart = time.Time{}, time.Time{}
			if !got.BatchFinishedAt.Equal(c.want.BatchFinishedAt) {
				t.Errorf("batchFinishedAt %v, want %v", got.BatchFinishedAt, c.want.BatchFinishedAt)
			}
			got.BatchFinishedAt, c.want.BatchFinishedAt = time.Time{}, time.Time{}
			if got != c.want {
				t.Errorf("decision\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestDecideWalk runs a whole paced rollout on the fake clock, feeding each decision back as
// the controller would (status.batch recorded, started nodes updating, then finished).
func TestDecideWalk(t *testing.T) {
	p := policy(t, soak(10*time.Minute, canary(intstr.FromInt32(1))))
	now := mustTime(now0)
	st := State{Nodes: pool(0, 0, 5)}
	var phases []string
	for step := 0; step < 20; step++ {
		d := Decide(p, st, now)
		phases = append(phases, string(d.Phase))
		if d.Phase == rolloutv1.PhaseDone {
			break
		}
		started := 0
		for i := range st.Nodes {
			switch {
			case st.Nodes[i].Progress == Updating:
				st.Nodes[i].Progress = Updated
			case st.Nodes[i].Progress == Pending && started < min(d.Start, 2): // maxUnavailable 2
				st.Nodes[i].Progress = Updating
				started++
			}
		}
		st.Batch, st.BatchFinishedAt = Record(st, d, started)
		if started == 0 && d.RequeueAfter > 0 {
			now = now.Add(d.RequeueAfter)
		} else {
			now = now.Add(time.Minute)
		}
	}
	got := strings.Join(phases, " ")
	want := "Canary Canary Canary Progressing Progressing Soaking Progressing Progressing Done"
	if got != want {
		t.Fatalf("phases\n got %s\nwant %s", got, want)
	}
}

func TestBatchFinishFirstSeenStartsTheSoak(t *testing.T) {
	p := policy(t, soak(30*time.Minute, canary(intstr.FromInt32(1))))
	now := mustTime(now0)
	d := Decide(p, State{Nodes: pool(1, 0, 4), Batch: 1}, now)
	if !d.BatchFinishedAt.Equal(now) || d.RequeueAfter != 30*time.Minute || d.Start != 0 {
		t.Fatalf("first sight of a finished canary: %+v", d)
	}
	later := Decide(p, State{Nodes: pool(1, 0, 4), Batch: 1, BatchFinishedAt: d.BatchFinishedAt}, now.Add(10*time.Minute))
	if !later.BatchFinishedAt.Equal(now) || later.RequeueAfter != 20*time.Minute {
		t.Fatalf("ten minutes on: %+v", later)
	}
}

// A batch counts only when a node of it starts: held back by maxUnavailable, neither the batch
// nor the soak's start moves, so the next decision starts it again instead of soaking.
func TestRecordCountsOnlyStartedBatches(t *testing.T) {
	p := policy(t, soak(30*time.Minute))
	now := mustTime(now0)
	st := State{Nodes: pool(3, 0, 4), Batch: 2, BatchFinishedAt: now.Add(-time.Hour)}
	d := Decide(p, st, now)
	if d.Start != 4 || d.Batch != 3 {
		t.Fatalf("decision %+v", d)
	}
	if b, f := Record(st, d, 0); b != 2 || !f.Equal(st.BatchFinishedAt) {
		t.Errorf("nothing started: recorded batch %d finished %v, want 2 and the old finish", b, f)
	}
	if again := Decide(p, st, now.Add(time.Minute)); again.Start != 4 || again.Phase != rolloutv1.PhaseProgressing {
		t.Errorf("after a held start: %+v, want the batch offered again", again)
	}
	if b, f := Record(st, d, 2); b != 3 || !f.IsZero() {
		t.Errorf("two started: recorded batch %d finished %v, want 3 and none", b, f)
	}
}

func mustTime(s string) time.Time {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestCompileSpec(t *testing.T) {
	_, err := Compile(rolloutv1.MachineConfigPoolRolloutSpec{Canary: &rolloutv1.Canary{Nodes: intstr.FromString("0%")}, Soak: metav1.Duration{Duration: -time.Minute}})
	for _, want := range []string{"spec.poolSelector: Required", `spec.canary.nodes: Invalid value: "0%"`, "spec.soak"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
	p := policy(t, nil)
	if !p.GateReady || !p.GateDaemonSets || p.Canary != nil || len(p.Windows) != 0 {
		t.Fatalf("defaults: %+v", p)
	}
}
