package rollback

import (
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

var now = time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)

// pool is worker targeting spec, having run status, with annotations.
func pool(spec, status string, annotations ...string) *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{}
	p.Name = "worker"
	p.Spec.Configuration.Name = spec
	p.Status.Configuration.Name = status
	if len(annotations) > 0 {
		p.Annotations = map[string]string{}
		for i := 0; i+1 < len(annotations); i += 2 {
			p.Annotations[annotations[i]] = annotations[i+1]
		}
	}
	return p
}

func held(from, to string) string {
	return Encode(rolloutv1.Rollback{From: from, To: to, By: ByUndo, Reason: "undone by an admin", At: now.Format(time.RFC3339)})
}

func only(names ...string) func(string) bool {
	return func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
}

func TestHold(t *testing.T) {
	rolledBack := pool("rendered-A", "rendered-A", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-A"))
	rolledBack.Status.Conditions = []mcfgv1.MachineConfigPoolCondition{{Type: poolcondition.RolledBack, Status: corev1.ConditionTrue}}
	ended := rolledBack.DeepCopy()
	delete(ended.Annotations, rolloutv1.RollbackAnnotation)
	for _, tc := range []struct {
		name      string
		pool      *mcfgv1.MachineConfigPool
		rendered  string
		exists    func(string) bool
		target    string
		clear     bool
		condition corev1.ConditionStatus // "" for none
		reason    string
		message   []string
	}{
		{name: "no annotation: the newest render, no condition (as before the feature)",
			pool: pool("rendered-A", "rendered-A"), rendered: "rendered-B", exists: only("rendered-A", "rendered-B"), target: "rendered-B"},
		{name: "held: points at To and says why and how to move on",
			pool: pool("rendered-B", "rendered-B", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-A")), rendered: "rendered-B",
			exists: only("rendered-A", "rendered-B"), target: "rendered-A", condition: corev1.ConditionTrue, reason: ReasonHeld,
			message: []string{"held on rendered-A", "rendered-B was rolled back by mco rollout undo: undone by an admin", "`mco rollout resume mcp/worker`"}},
		{name: "a new render ends the hold and removes the annotation",
			pool: rolledBack, rendered: "rendered-C", exists: only("rendered-A", "rendered-B", "rendered-C"),
			target: "rendered-C", clear: true, condition: corev1.ConditionFalse, reason: ReasonNewRender, message: []string{"rendered-C replaces rendered-B"}},
		{name: "To deleted: refuses, keeps the target, names it",
			pool: pool("rendered-B", "rendered-B", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-A")), rendered: "rendered-B",
			exists: only("rendered-B"), target: "", condition: corev1.ConditionTrue, reason: ReasonTargetMissing,
			message: []string{"cannot hold on rendered-A: it is not on the cluster", "keeps its target rendered-B"}},
		{name: "bad JSON: keeps the target, names the annotation",
			pool: pool("rendered-B", "rendered-A", rolloutv1.RollbackAnnotation, "{"), rendered: "rendered-C", exists: only("rendered-B"),
			target: "rendered-B", condition: corev1.ConditionTrue, reason: ReasonInvalid, message: []string{"pool worker: annotation rollout.mco.dev/rollback is not a rollback"}},
		{name: "from equals to: invalid",
			pool: pool("rendered-B", "rendered-A", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-B")), rendered: "rendered-B", exists: only("rendered-B"),
			target: "rendered-B", condition: corev1.ConditionTrue, reason: ReasonInvalid, message: []string{"from and to are both rendered-B"}},
		{name: "resumed: the condition turns False",
			pool: ended, rendered: "rendered-B", exists: only("rendered-A", "rendered-B"), target: "rendered-B", condition: corev1.ConditionFalse, reason: ReasonEnded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Hold(tc.pool, tc.rendered, tc.exists)
			if d.Target != tc.target || d.Clear != tc.clear {
				t.Errorf("target %q clear %v, want %q %v", d.Target, d.Clear, tc.target, tc.clear)
			}
			switch {
			case tc.condition == "" && d.Condition != nil:
				t.Fatalf("condition %+v, want none", *d.Condition)
			case tc.condition == "":
				return
			case d.Condition == nil:
				t.Fatalf("no condition, want %s %s", tc.condition, tc.reason)
			}
			if d.Condition.Status != tc.condition || d.Condition.Reason != tc.reason {
				t.Errorf("condition %s %s, want %s %s", d.Condition.Status, d.Condition.Reason, tc.condition, tc.reason)
			}
			for _, m := range tc.message {
				if !strings.Contains(d.Condition.Message, m) {
					t.Errorf("message %q lacks %q", d.Condition.Message, m)
				}
			}
		})
	}
}

func TestUndo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pool     *mcfgv1.MachineConfigPool
		exists   func(string) bool
		from, to string
		err      string
	}{
		{name: "rollout in progress: back to status.configuration",
			pool: pool("rendered-B", "rendered-A"), exists: only("rendered-A", "rendered-B"), from: "rendered-B", to: "rendered-A"},
		{name: "completed: back to the previous configuration",
			pool: pool("rendered-B", "rendered-B", rolloutv1.PreviousConfigurationAnnotation, "rendered-A"), exists: only("rendered-A", "rendered-B"), from: "rendered-B", to: "rendered-A"},
		{name: "in progress wins over an older previous configuration",
			pool: pool("rendered-C", "rendered-B", rolloutv1.PreviousConfigurationAnnotation, "rendered-A"), exists: only("rendered-A", "rendered-B", "rendered-C"), from: "rendered-C", to: "rendered-B"},
		{name: "no history", pool: pool("rendered-B", "rendered-B"), exists: only("rendered-B"), err: "pool worker has no previous configuration to return to"},
		{name: "previous gone", pool: pool("rendered-B", "rendered-B", rolloutv1.PreviousConfigurationAnnotation, "rendered-A"), exists: only("rendered-B"),
			err: "pool worker cannot return to rendered-A, its previous configuration (annotation rollout.mco.dev/previous-configuration): that rendered config is not on the cluster"},
		{name: "already held", pool: pool("rendered-A", "rendered-A", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-A")), exists: only("rendered-A", "rendered-B"),
			err: "pool worker is already held on rendered-A: rendered-B was rolled back by mco rollout undo"},
		{name: "no target yet", pool: pool("", ""), exists: only(), err: "pool worker has no rendered config yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb, err := Undo(tc.pool, tc.exists, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rb.From != tc.from || rb.To != tc.to || rb.By != ByUndo || rb.At != "2026-11-29T07:00:00Z" {
				t.Errorf("got %+v, want from %s to %s by %s", rb, tc.from, tc.to, ByUndo)
			}
		})
	}
}

func node(name, current, desired string, state protocol.NodeState, reason string) *corev1.Node {
	n := &corev1.Node{}
	n.Name = name
	n.Annotations = map[string]string{protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: string(state)}
	if reason != "" {
		n.Annotations[protocol.ReasonAnnotation] = reason
	}
	return n
}

func TestOnFailure(t *testing.T) {
	healthy := []*corev1.Node{node("w1", "rendered-B", "rendered-B", protocol.NodeDone, ""), node("w2", "rendered-A", "rendered-A", protocol.NodeDone, "")}
	reverted := node("w3", "rendered-A", "rendered-B", protocol.NodeDegraded, "NodeBootFailed: kubelet not healthy within 2m0s of booting rendered-B; reverted")
	unreconcilable := node("w4", "rendered-A", "rendered-B", protocol.NodeUnreconcilable, "ignition: unsupported field")
	olderFailure := node("w5", "rendered-0", "rendered-A", protocol.NodeDegraded, "something older")
	since := metav1.NewTime(now.Add(-time.Hour)).Time
	for _, tc := range []struct {
		name   string
		pool   *mcfgv1.MachineConfigPool
		f      Failure
		reason string // "" for no rollback
	}{
		{name: "healthy rollout: nothing", pool: pool("rendered-B", "rendered-A"), f: Failure{Policy: "p", Nodes: healthy}},
		{name: "a node reverted its boot", pool: pool("rendered-B", "rendered-A"), f: Failure{Policy: "p", Nodes: append(healthy, reverted)},
			reason: "node w3 failed to update to rendered-B: NodeBootFailed: kubelet not healthy"},
		{name: "two failures: first by name, counted", pool: pool("rendered-B", "rendered-A"), f: Failure{Policy: "p", Nodes: append(healthy, unreconcilable, reverted)},
			reason: "node w3 failed to update to rendered-B: NodeBootFailed: kubelet not healthy within 2m0s of booting rendered-B; reverted (and 1 more)"},
		{name: "a failure towards an older target is not this rollout's", pool: pool("rendered-B", "rendered-A"), f: Failure{Policy: "p", Nodes: append(healthy, olderFailure)}},
		{name: "unresponsive mid-update", pool: pool("rendered-B", "rendered-A"),
			f:      Failure{Policy: "p", Nodes: healthy, Unresponsive: []rollout.Unresponsive{{Node: "w1", Config: "rendered-B", Since: since}}},
			reason: "Node w1 has not been Ready since 2026-11-29T06:00:00Z while updating to rendered-B"},
		{name: "health gate", pool: pool("rendered-B", "rendered-A"), f: Failure{Policy: "p", Nodes: healthy, Gate: "node w1 not Ready since 06:59"},
			reason: "health gate: node w1 not Ready since 06:59"},
		{name: "nothing to return to: status is the target", pool: pool("rendered-B", "rendered-B"), f: Failure{Policy: "p", Nodes: append(healthy, reverted)}},
		{name: "nothing to return to: new pool", pool: pool("rendered-B", ""), f: Failure{Policy: "p", Nodes: append(healthy, reverted)}},
		{name: "written once", pool: pool("rendered-B", "rendered-A", rolloutv1.RollbackAnnotation, held("rendered-B", "rendered-A")), f: Failure{Policy: "p", Nodes: append(healthy, reverted)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb := OnFailure(tc.pool, tc.f, now)
			if tc.reason == "" {
				if rb != nil {
					t.Fatalf("rollback %+v, want none", *rb)
				}
				return
			}
			if rb == nil {
				t.Fatalf("no rollback, want one for %q", tc.reason)
			}
			if rb.From != "rendered-B" || rb.To != "rendered-A" || rb.By != "spec.onFailure of mcprollout/p" || !strings.HasPrefix(rb.Reason, tc.reason) {
				t.Errorf("got %+v, want rendered-B to rendered-A by the policy, reason %q", *rb, tc.reason)
			}
		})
	}
	long := node("w6", "rendered-A", "rendered-B", protocol.NodeDegraded, strings.Repeat("x", 2000))
	if rb := OnFailure(pool("rendered-B", "rendered-A"), Failure{Policy: "p", Nodes: []*corev1.Node{long}}, now); len(rb.Reason) > maxReason+100 {
		t.Errorf("reason of %d bytes, want it bounded", len(rb.Reason))
	}
}

func TestPrevious(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pool      *mcfgv1.MachineConfigPool
		completed bool
		want      string
	}{
		{"completed: the old status", pool("rendered-B", "rendered-A"), true, "rendered-A"},
		{"not completed", pool("rendered-B", "rendered-A"), false, ""},
		{"first rollout of a new pool", pool("rendered-B", ""), true, ""},
		{"already recorded", pool("rendered-B", "rendered-A", rolloutv1.PreviousConfigurationAnnotation, "rendered-A"), true, ""},
	} {
		if got := Previous(tc.pool, tc.completed); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNeeded(t *testing.T) {
	pools := []mcfgv1.MachineConfigPool{
		*pool("rendered-w3", "rendered-w3", rolloutv1.PreviousConfigurationAnnotation, "rendered-w2"),
		*pool("rendered-i1", "rendered-i1", rolloutv1.RollbackAnnotation, held("rendered-i2", "rendered-i1"), rolloutv1.PreviousConfigurationAnnotation, "rendered-i0"),
		*pool("rendered-x", "rendered-x", rolloutv1.RollbackAnnotation, "not json"),
	}
	got := strings.Join(slices.Sorted(slices.Values(Needed(pools).UnsortedList())), ",")
	want := "rendered-i0,rendered-i1,rendered-i2,rendered-w2"
	if got != want {
		t.Errorf("needed %s, want %s", got, want)
	}
}
