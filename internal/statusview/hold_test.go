package statusview

import (
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

func TestHoldChange(t *testing.T) {
	done := map[string]string{protocol.CurrentConfigAnnotation: "r1", protocol.DesiredConfigAnnotation: "r1", protocol.StateAnnotation: "Done"}
	updating := map[string]string{protocol.CurrentConfigAnnotation: "r1", protocol.DesiredConfigAnnotation: "r2", protocol.StateAnnotation: "Working"}
	failed := map[string]string{protocol.CurrentConfigAnnotation: "r1", protocol.DesiredConfigAnnotation: "r2", protocol.StateAnnotation: "Degraded"}
	with := func(a map[string]string, hold string) map[string]string {
		out := map[string]string{rolloutv1.HoldAnnotation: hold}
		for k, v := range a {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		undo        bool
		write       bool
		line        string
	}{
		{"hold an idle node", done, false, true, "node/w: held; no update starts on it until `mco hold --undo w`"},
		{"hold an updating node", updating, false, true, "node/w: held; its update to r2 is in progress and will finish; no further update starts on it until `mco hold --undo w`"},
		{"hold a failed node: nothing in progress", failed, false, true, "node/w: held; no update starts on it until `mco hold --undo w`"},
		{"already held", with(done, "true"), false, false, "node/w: already held; no update starts on it until `mco hold --undo w`"},
		{"already held and updating", with(updating, "true"), false, false, "node/w: already held; its update to r2 is in progress and will finish; no further update starts on it until `mco hold --undo w`"},
		{"a typo is corrected", with(done, "yes"), false, true, "node/w: held; no update starts on it until `mco hold --undo w`"},
		{"release", with(done, "true"), true, true, "node/w: released; it is updated with its pool again (within maxUnavailable) if it is behind"},
		{"release a node not held", done, true, false, "node/w: not held; nothing to release"},
		{"release removes a hold that held nothing", with(done, "false"), true, true, "node/w: hold annotation \"false\" removed (it did not hold the node: only \"true\" does)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w", Annotations: tc.annotations}}
			write, line := HoldChange(n, tc.undo)
			if write != tc.write || line != tc.line {
				t.Errorf("HoldChange = %v, %q; want %v, %q", write, line, tc.write, tc.line)
			}
		})
	}
}

// The nodes table shows a hold and a priority; a node with neither reads as before.
func TestHeldInNodesTable(t *testing.T) {
	pool := mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}
	pool.Spec.Configuration.Name = "r2"
	mk := func(name, current, desired, state string, more ...string) corev1.Node {
		a := map[string]string{protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: state}
		for i := 0; i+1 < len(more); i += 2 {
			a[more[i]] = more[i+1]
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": "worker"}, Annotations: a}}
	}
	rows := Nodes([]mcfgv1.MachineConfigPool{pool}, []corev1.Node{
		mk("a", "r1", "r1", "Done", rolloutv1.HoldAnnotation, "true"),
		mk("b", "r1", "r2", "Working", rolloutv1.HoldAnnotation, "true", rolloutv1.UpdatePriorityAnnotation, "10"),
		mk("c", "r1", "r1", "Done", rolloutv1.UpdatePriorityAnnotation, "-3"),
		mk("d", "r1", "r1", "Done"),
	})
	var got []string
	for _, r := range rows {
		got = append(got, r.Name+"="+r.PhaseColumn())
	}
	want := []string{"a=held", "b=applying, held, priority 10", "c=waiting, priority -3", "d=waiting"}
	if !slices.Equal(got, want) {
		t.Errorf("phases %q, want %q", got, want)
	}
	var b strings.Builder
	if err := WriteTables(&b, nil, rows); err != nil {
		t.Fatal(err)
	}
	if rows[0].Reason != "held back by an admin; `mco hold --undo a` releases it" || rows[1].Reason != "" {
		t.Errorf("reasons %q, %q", rows[0].Reason, rows[1].Reason)
	}
	if !strings.Contains(b.String(), "applying, held, priority 10") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestTargetedMeanwhile(t *testing.T) {
	mk := func(desired string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w", Annotations: map[string]string{protocol.DesiredConfigAnnotation: desired}}}
	}
	if got := TargetedMeanwhile(mk("r1"), mk("r1")); got != "" {
		t.Errorf("unchanged: %q", got)
	}
	if got, want := TargetedMeanwhile(mk("r1"), mk("r2")), "but the node controller gave it r2 just before the hold: that update goes on and finishes"; got != want {
		t.Errorf("moved: %q, want %q", got, want)
	}
}
