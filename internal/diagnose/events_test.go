package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func event(ns, kind, objNS, reason string, last time.Time) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: reason},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: objNS, Name: "x"},
		Reason:         reason, Type: corev1.EventTypeNormal, Message: "m",
		LastTimestamp: metav1.NewTime(last),
	}
}

func TestRelevantEvent(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Hour)
	tests := []struct {
		name string
		ev   corev1.Event
		want bool
	}{
		{"a Node's drain", event("default", "Node", "", "Drain", now), true},
		{"a pool's", event("default", "MachineConfigPool", "", "SetDesiredConfig", now), true},
		{"a rollout policy's", event("default", "MachineConfigPoolRollout", "", "Soak", now), true},
		{"a pod in mco's namespace", event(Namespace, "Pod", Namespace, "BackOff", now), true},
		{"an app's pod elsewhere", event("shop", "Pod", "shop", "Pulled", now), false},
		{"a Node's, too old", event("default", "Node", "", "Drain", since.Add(-time.Second)), false},
		{"a Node's, at the cutoff", event("default", "Node", "", "Drain", since), true},
		{"series time counts over the old field", func() corev1.Event {
			ev := event("default", "Node", "", "Drain", since.Add(-time.Hour))
			ev.Series = &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(now)}
			return ev
		}(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RelevantEvent(&tt.ev, since); got != tt.want {
				t.Errorf("RelevantEvent = %v, want %v", got, tt.want)
			}
		})
	}
	old := event("default", "Node", "", "Drain", since.Add(-24*time.Hour))
	if !RelevantEvent(&old, time.Time{}) {
		t.Error("a zero since must keep events of any age")
	}
}

func TestEventsTableOldestFirst(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	later := event("default", "Node", "", "Rebooted", now)
	earlier := event(Namespace, "Pod", Namespace, "Started", now.Add(-time.Minute))
	earlier.Message = "two\nlines"
	got := EventsTable([]corev1.Event{later, earlier})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "Started") || !strings.Contains(lines[2], "Rebooted") {
		t.Fatalf("table not oldest first:\n%s", got)
	}
	if !strings.Contains(lines[1], Namespace+"/pod/x") || !strings.Contains(lines[1], "two lines") {
		t.Errorf("row %q: want the namespaced object and the message on one line", lines[1])
	}
}
