package machineconfignode

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const node = "worker-0"

// want is one condition's expected status and reason ("" reason: not checked).
type want struct {
	status metav1.ConditionStatus
	reason string
}

var (
	notYet  = want{metav1.ConditionFalse, ReasonNotYetOccurred}
	yes     = metav1.ConditionTrue
	no      = metav1.ConditionFalse
	unknown = metav1.ConditionUnknown
)

func w(status metav1.ConditionStatus, reason string) want { return want{status, reason} }

// settled is a node that finished an update to A (no drain, no reboot): the report the next
// update starts from.
var settled = []Step{
	{Kind: Prepared, Current: "rendered-a0", Desired: "rendered-a", Actions: "Reload crio.service"},
	{Kind: Applied, Current: "rendered-a0", Desired: "rendered-a", Actions: "Reload crio.service"},
	{Kind: Done, Current: "rendered-a", Desired: "rendered-a"},
}

func TestNext(t *testing.T) {
	for _, c := range []struct {
		name    string
		steps   []Step
		want    map[mcfgv1.StateProgress]want
		version mcfgv1.MachineConfigNodeStatusMachineConfigVersion
		message map[mcfgv1.StateProgress]string // substrings
	}{{
		name:  "a node that joined in its config",
		steps: []Step{{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: notYet, mcfgv1.MachineConfigNodeUpdateExecuted: notYet,
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: notYet, mcfgv1.MachineConfigNodeUpdateComplete: notYet,
			mcfgv1.MachineConfigNodeUpdateDrained: notYet, mcfgv1.MachineConfigNodeUpdateFilesAndOS: notYet,
			mcfgv1.MachineConfigNodeUpdateCordoned: notYet, mcfgv1.MachineConfigNodeUpdateRebooted: notYet,
			mcfgv1.MachineConfigNodeUpdateUncordoned: notYet,
			mcfgv1.MachineConfigNodeResumed:          w(yes, "Resumed"),
			mcfgv1.MachineConfigNodeUpdated:          w(yes, "Updated"),
			mcfgv1.MachineConfigNodeNodeDegraded:     w(no, "NodeDegraded"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-a"},
		message: map[mcfgv1.StateProgress]string{mcfgv1.MachineConfigNodeResumed: "In desired config rendered-a. Resumed normal operations."},
	}, {
		name:  "a rebootless update prepared, no drain",
		steps: append(settled[:3:3], Step{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reload crio.service"}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdated:                  w(no, "Updated"),
			mcfgv1.MachineConfigNodeUpdatePrepared:           w(yes, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeUpdateExecuted:           w(unknown, "Drained"),
			mcfgv1.MachineConfigNodeUpdateDrained:            w(no, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeResumed:                  notYet,
			mcfgv1.MachineConfigNodeUpdateComplete:           notYet,
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: notYet,
			mcfgv1.MachineConfigNodeNodeDegraded:             w(no, "NodeDegraded"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-b"},
		message: map[mcfgv1.StateProgress]string{
			mcfgv1.MachineConfigNodeUpdatePrepared: "Update Compatible. Post Cfg Actions: [Reload crio.service] Drain Required: false",
			mcfgv1.MachineConfigNodeUpdateDrained:  "Node Drain Not required for this update.",
		},
	}, {
		name: "a rebootless update done",
		steps: append(settled[:3:3],
			Step{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reload crio.service"},
			Step{Kind: Applied, Current: "rendered-a", Desired: "rendered-b", Actions: "Reload crio.service"},
			Step{Kind: Done, Current: "rendered-b", Desired: "rendered-b"}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared:           w(yes, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeUpdateExecuted:           w(yes, "AppliedFilesAndOS"),
			mcfgv1.MachineConfigNodeUpdateFilesAndOS:         w(yes, "UpdateExecutedAppliedFilesAndOS"),
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: w(yes, "UpdatePostActionComplete"),
			mcfgv1.MachineConfigNodeUpdateComplete:           w(yes, "UpdateComplete"),
			mcfgv1.MachineConfigNodeUpdateDrained:            w(no, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeUpdateCordoned:           notYet,
			mcfgv1.MachineConfigNodeUpdateUncordoned:         notYet,
			mcfgv1.MachineConfigNodeUpdateRebooted:           notYet,
			mcfgv1.MachineConfigNodeResumed:                  w(yes, "Resumed"),
			mcfgv1.MachineConfigNodeUpdated:                  w(yes, "Updated"),
			mcfgv1.MachineConfigNodeNodeDegraded:             w(no, "NodeDegraded"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-b", Desired: "rendered-b"},
		message: map[mcfgv1.StateProgress]string{
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: "Node has run: Reload crio.service",
			mcfgv1.MachineConfigNodeUpdateFilesAndOS:         "OS did not need an update. SSH Keys did not need an update",
		},
	}, {
		name: "draining",
		steps: []Step{{Kind: Done, Current: "rendered-a", Desired: "rendered-a"},
			{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reboot", Drain: true}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdateExecuted: w(unknown, "Drained"),
			mcfgv1.MachineConfigNodeUpdateDrained:  w(unknown, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeUpdateCordoned: notYet,
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-b"},
		message: map[mcfgv1.StateProgress]string{mcfgv1.MachineConfigNodeUpdateDrained: "until the drain controller acknowledges drain-rendered-b"},
	}, {
		name: "a blocked drain",
		steps: []Step{{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reboot", Drain: true},
			{Kind: DrainBlocked, Current: "rendered-a", Desired: "rendered-b", Message: "pod default/db: PodDisruptionBudget default/db"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdateCordoned: w(yes, "UpdateExecutedCordoned"),
			mcfgv1.MachineConfigNodeUpdateDrained:  w(unknown, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeUpdateExecuted: w(unknown, "Drained"),
		},
		message: map[mcfgv1.StateProgress]string{mcfgv1.MachineConfigNodeUpdateDrained: "Node Drain has not succeeded: pod default/db: PodDisruptionBudget default/db"},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-b"},
	}, {
		name: "rebooting",
		steps: []Step{{Kind: Done, Current: "rendered-a", Desired: "rendered-a"},
			{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reboot", Drain: true},
			{Kind: Drained, Current: "rendered-a", Desired: "rendered-b"},
			{Kind: Applied, Current: "rendered-a", Desired: "rendered-b", Reboot: true, OS: true}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdateCordoned:           w(yes, "UpdateExecutedCordoned"),
			mcfgv1.MachineConfigNodeUpdateDrained:            w(yes, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeUpdateExecuted:           w(yes, "AppliedFilesAndOS"),
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: w(unknown, "RebootedNode"),
			mcfgv1.MachineConfigNodeUpdateRebooted:           w(unknown, "RebootedNode"),
			mcfgv1.MachineConfigNodeUpdateComplete:           notYet,
			mcfgv1.MachineConfigNodeUpdated:                  w(no, "Updated"),
		},
		message: map[mcfgv1.StateProgress]string{
			mcfgv1.MachineConfigNodeUpdateRebooted:   "Upgrade requires a reboot.",
			mcfgv1.MachineConfigNodeUpdateFilesAndOS: "OS did need an update. SSH Keys did not need an update",
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-b"},
	}, {
		name: "rebooted and done",
		steps: []Step{{Kind: Done, Current: "rendered-a", Desired: "rendered-a"},
			{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Actions: "Reboot", Drain: true},
			{Kind: Drained, Current: "rendered-a", Desired: "rendered-b"},
			{Kind: Applied, Current: "rendered-a", Desired: "rendered-b", Reboot: true},
			{Kind: Done, Current: "rendered-b", Desired: "rendered-b"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared:           w(yes, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeUpdateExecuted:           w(yes, "AppliedFilesAndOS"),
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: w(yes, "RebootedNode"),
			mcfgv1.MachineConfigNodeUpdateRebooted:           w(yes, "RebootedNode"),
			mcfgv1.MachineConfigNodeUpdateComplete:           w(yes, "Uncordoned"),
			mcfgv1.MachineConfigNodeUpdateUncordoned:         w(yes, "UpdateCompleteUncordoned"),
			mcfgv1.MachineConfigNodeUpdateCordoned:           w(yes, "UpdateExecutedCordoned"),
			mcfgv1.MachineConfigNodeUpdateDrained:            w(yes, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeResumed:                  w(yes, "Resumed"),
			mcfgv1.MachineConfigNodeUpdated:                  w(yes, "Updated"),
			mcfgv1.MachineConfigNodeNodeDegraded:             w(no, "NodeDegraded"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-b", Desired: "rendered-b"},
	}, {
		name: "done after writes were lost: the report still ends complete",
		steps: []Step{{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Drain: true},
			{Kind: Done, Current: "rendered-b", Desired: "rendered-b"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdateExecuted:           w(yes, "AppliedFilesAndOS"),
			mcfgv1.MachineConfigNodeUpdatePostActionComplete: w(yes, "UpdatePostActionComplete"),
			mcfgv1.MachineConfigNodeUpdateComplete:           w(yes, "UpdateComplete"),
			mcfgv1.MachineConfigNodeUpdated:                  w(yes, "Updated"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-b", Desired: "rendered-b"},
	}, {
		name: "an update that failed to apply keeps how far it got",
		steps: []Step{{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Drain: true},
			{Kind: Drained, Current: "rendered-a", Desired: "rendered-b"},
			{Kind: Degraded, Current: "rendered-a", Desired: "rendered-b", Message: "applying rendered-b (rolled back): reload crio.service: exit 1"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: w(yes, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeUpdateDrained:  w(yes, "UpdateExecutedDrained"),
			mcfgv1.MachineConfigNodeNodeDegraded:   w(yes, "NodeDegraded"),
			mcfgv1.MachineConfigNodeUpdated:        w(no, "Updated"),
		},
		message: map[mcfgv1.StateProgress]string{mcfgv1.MachineConfigNodeNodeDegraded: "Node worker-0 is reporting Degraded: applying rendered-b (rolled back): reload crio.service: exit 1"},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-b"},
	}, {
		name: "an update that failed before it was prepared does not show the last one's progress",
		steps: append(settled[:3:3],
			Step{Kind: Degraded, Current: "rendered-a", Desired: "rendered-b", Message: "unexpected on-disk state"}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: notYet,
			mcfgv1.MachineConfigNodeUpdateComplete: notYet,
			mcfgv1.MachineConfigNodeResumed:        notYet,
			mcfgv1.MachineConfigNodeNodeDegraded:   w(yes, "NodeDegraded"),
			mcfgv1.MachineConfigNodeUpdated:        w(no, "Updated"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-a"},
	}, {
		name: "drift in the current config, then repaired",
		steps: append(settled[:3:3],
			Step{Kind: Degraded, Current: "rendered-a", Desired: "rendered-a", Message: "drift"},
			Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdateComplete: w(yes, "UpdateComplete"),
			mcfgv1.MachineConfigNodeNodeDegraded:   w(no, "NodeDegraded"),
			mcfgv1.MachineConfigNodeUpdated:        w(yes, "Updated"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-a"},
	}, {
		name: "unreconcilable",
		steps: append(settled[:3:3],
			Step{Kind: Unreconcilable, Current: "rendered-a", Desired: "rendered-b", Message: "ignition.storage.disks changed"}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: w(unknown, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeNodeDegraded:   w(yes, "NodeDegraded"),
			mcfgv1.MachineConfigNodeUpdated:        w(no, "Updated"),
		},
		message: map[mcfgv1.StateProgress]string{
			mcfgv1.MachineConfigNodeUpdatePrepared: "MachineConfigs rendered-a and rendered-b are not compatible. Err: ignition.storage.disks changed",
			mcfgv1.MachineConfigNodeNodeDegraded:   "is reporting Unreconcilable",
		},
		// Not validated, so not desired in the status (OpenShift keeps the placeholder there).
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-a"},
	}, {
		name: "the config the node is in, forced again, starts over",
		steps: append(settled[:3:3],
			Step{Kind: Prepared, Current: "rendered-a", Desired: "rendered-a", Actions: "Reboot", Drain: true}),
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: w(yes, "UpdatePrepared"),
			mcfgv1.MachineConfigNodeUpdateExecuted: w(unknown, "Drained"),
			mcfgv1.MachineConfigNodeUpdateComplete: notYet,
			mcfgv1.MachineConfigNodeUpdated:        w(no, "Updated"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-a", Desired: "rendered-a"},
	}, {
		name:  "a new node updating from nothing",
		steps: []Step{{Kind: Prepared, Desired: "rendered-a"}},
		want: map[mcfgv1.StateProgress]want{
			mcfgv1.MachineConfigNodeUpdatePrepared: w(yes, "UpdatePrepared"),
		},
		version: mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: NotYetSet, Desired: "rendered-a"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			st := run(c.steps)
			for typ, wnt := range c.want {
				cond := meta.FindStatusCondition(st.Conditions, string(typ))
				if cond == nil {
					t.Errorf("%s missing", typ)
					continue
				}
				if cond.Status != wnt.status || (wnt.reason != "" && cond.Reason != wnt.reason) {
					t.Errorf("%s = %s/%s (%q), want %s/%s", typ, cond.Status, cond.Reason, cond.Message, wnt.status, wnt.reason)
				}
			}
			for typ, sub := range c.message {
				if cond := meta.FindStatusCondition(st.Conditions, string(typ)); cond == nil || !strings.Contains(cond.Message, sub) {
					t.Errorf("%s message %q does not contain %q", typ, cond.Message, sub)
				}
			}
			if st.ConfigVersion == nil || *st.ConfigVersion != c.version {
				t.Errorf("configVersion = %+v, want %+v", st.ConfigVersion, c.version)
			}
			checkValid(t, st)
		})
	}
}

// run applies steps from an empty status, one second apart.
func run(steps []Step) mcfgv1.MachineConfigNodeStatus {
	var st mcfgv1.MachineConfigNodeStatus
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range steps {
		at = at.Add(time.Second)
		st = Next(node, st, s, metav1.NewTime(at))
	}
	return st
}

// checkValid: every type present once, conditions the API server accepts, and a version the
// CRD accepts (valid names in both fields).
func checkValid(t *testing.T, st mcfgv1.MachineConfigNodeStatus) {
	t.Helper()
	if errs := metav1validation.ValidateConditions(st.Conditions, field.NewPath("status", "conditions")); len(errs) > 0 {
		t.Errorf("invalid conditions: %v", errs.ToAggregate())
	}
	if len(st.Conditions) != len(Types) || len(st.Conditions) > 20 {
		t.Errorf("%d conditions, want the %d types (the CRD allows 20)", len(st.Conditions), len(Types))
	}
	for _, typ := range Types {
		if meta.FindStatusCondition(st.Conditions, string(typ)) == nil {
			t.Errorf("condition %s missing", typ)
		}
	}
	if st.ConfigVersion.Current == "" || st.ConfigVersion.Desired == "" {
		t.Errorf("configVersion %+v has an empty name, which the CRD refuses", st.ConfigVersion)
	}
}

// TestNextIsIdempotent: the agent notes a step on every pass; a step seen again must change
// nothing, or every pass would be a write.
func TestNextIsIdempotent(t *testing.T) {
	flows := [][]Step{
		append(settled[:3:3], Step{Kind: Prepared, Current: "rendered-a", Desired: "rendered-b", Drain: true},
			Step{Kind: DrainBlocked, Current: "rendered-a", Desired: "rendered-b", Message: "pod x"},
			Step{Kind: Drained, Current: "rendered-a", Desired: "rendered-b"},
			Step{Kind: Applied, Current: "rendered-a", Desired: "rendered-b", Reboot: true},
			Step{Kind: Degraded, Current: "rendered-a", Desired: "rendered-b", Message: "reboot failed"},
			Step{Kind: Done, Current: "rendered-b", Desired: "rendered-b"}),
		{{Kind: Unreconcilable, Current: "rendered-a", Desired: "rendered-b", Message: "disks"}},
		append(settled[:3:3], Step{Kind: Prepared, Current: "rendered-a", Desired: "rendered-a", Drain: true},
			Step{Kind: Drained, Current: "rendered-a", Desired: "rendered-a"},
			Step{Kind: Applied, Current: "rendered-a", Desired: "rendered-a", Reboot: true},
			Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}),
	}
	for _, steps := range flows {
		var st mcfgv1.MachineConfigNodeStatus
		for i, s := range steps {
			st = Next(node, st, s, metav1.NewTime(time.Unix(int64(i), 0)))
			again := Next(node, st, s, metav1.NewTime(time.Unix(int64(i+100), 0)))
			if !equality.Semantic.DeepEqual(st, again) {
				t.Errorf("step %d (%s) seen twice changed the status:\n%s", i, s.Kind, diff(st, again))
			}
			// The same holds for the step before it, seen again on a later pass (Prepared
			// while waiting for the drain after the drain was acknowledged is not a reset).
			if i > 0 && steps[i-1].Kind == Prepared {
				again := Next(node, st, steps[i-1], metav1.NewTime(time.Unix(int64(i+200), 0)))
				if s.Kind != Degraded && !equality.Semantic.DeepEqual(st, again) {
					t.Errorf("Prepared seen again after %s changed the status:\n%s", s.Kind, diff(st, again))
				}
			}
		}
	}
}

// TestTransitionTimes: a condition's lastTransitionTime moves only when its status does; a new
// update moves those it starts over.
func TestTransitionTimes(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	st := Next(node, mcfgv1.MachineConfigNodeStatus{}, Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}, t0)
	st = Next(node, st, Step{Kind: Degraded, Current: "rendered-a", Desired: "rendered-a", Message: "drift"}, t1)
	for _, c := range st.Conditions {
		moved := c.Type == string(mcfgv1.MachineConfigNodeNodeDegraded) || c.Type == string(mcfgv1.MachineConfigNodeUpdated)
		if got := c.LastTransitionTime; moved != got.Equal(&t1) {
			t.Errorf("%s lastTransitionTime %v (status %s), moved=%v", c.Type, got, c.Status, moved)
		}
	}
}

// TestUnknownConditionsKept: conditions of types the agent does not write (pinned image sets,
// written by another writer) survive its steps.
func TestUnknownConditionsKept(t *testing.T) {
	other := metav1.Condition{Type: string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded), Status: no, Reason: "AsExpected", Message: "x",
		LastTransitionTime: metav1.NewTime(time.Unix(1, 0))}
	st := Next(node, mcfgv1.MachineConfigNodeStatus{Conditions: []metav1.Condition{other}},
		Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}, metav1.NewTime(time.Unix(5, 0)))
	if got := meta.FindStatusCondition(st.Conditions, other.Type); got == nil || *got != other {
		t.Errorf("%s = %+v, want it kept as %+v", other.Type, got, other)
	}
}

func diff(a, b mcfgv1.MachineConfigNodeStatus) string {
	var out []string
	for _, ca := range a.Conditions {
		cb := meta.FindStatusCondition(b.Conditions, ca.Type)
		if cb == nil || *cb != ca {
			out = append(out, fmt.Sprintf("  %s: %+v -> %+v", ca.Type, ca, cb))
		}
	}
	if !equality.Semantic.DeepEqual(a.ConfigVersion, b.ConfigVersion) {
		out = append(out, fmt.Sprintf("  configVersion %+v -> %+v", a.ConfigVersion, b.ConfigVersion))
	}
	return strings.Join(out, "\n")
}

// TestAdoptionPending: a node waiting for adoption says so, with what adopting would do, until
// it is in a config; other nodes never carry the condition.
func TestAdoptionPending(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	if st := Next(node, mcfgv1.MachineConfigNodeStatus{}, Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}, t0); meta.FindStatusCondition(st.Conditions, string(TypeAdoptionPending)) != nil {
		t.Fatal("a node never waiting for adoption carries AdoptionPending")
	}
	const summary = "adopting into rendered-a would write 1 file (/etc/chrony.conf), drain, then reboot"
	st := Next(node, mcfgv1.MachineConfigNodeStatus{}, Step{Kind: AdoptionPending, Desired: "rendered-a", Message: summary}, t0)
	c := meta.FindStatusCondition(st.Conditions, string(TypeAdoptionPending))
	if c == nil || c.Status != yes || c.Reason != "ApprovalRequired" || c.Message != summary {
		t.Fatalf("waiting: %+v", c)
	}
	if st.ConfigVersion == nil || st.ConfigVersion.Current != NotYetSet {
		t.Errorf("a waiting node claims a config: %+v", st.ConfigVersion)
	}
	st = Next(node, st, Step{Kind: Done, Current: "rendered-a", Desired: "rendered-a"}, t1)
	if c := meta.FindStatusCondition(st.Conditions, string(TypeAdoptionPending)); c == nil || c.Status != no || c.Reason != "Adopted" {
		t.Fatalf("adopted: %+v", c)
	}
}
