package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Namespace is where mco's controller, server and agents run, on a cluster and in the dev cluster.
const Namespace = "openshift-machine-config-operator"

// eventKinds are the kinds whose events tell what mco did or met: the objects it manages and
// the Nodes it updates (drains, reboots, agent progress).
var eventKinds = map[string]bool{
	"Node": true, "MachineConfigPool": true, "MachineConfig": true, "MachineConfigNode": true,
	"KubeletConfig": true, "ContainerRuntimeConfig": true, "ControllerConfig": true,
	"MachineConfiguration": true, "MachineConfigPoolRollout": true,
}

// RelevantEvent reports whether ev belongs in the bundle: it is about one of eventKinds or
// happened in mco's namespace, and was last seen at or after since (zero: any time).
func RelevantEvent(ev *corev1.Event, since time.Time) bool {
	if !eventKinds[ev.InvolvedObject.Kind] && ev.Namespace != Namespace && ev.InvolvedObject.Namespace != Namespace {
		return false
	}
	return since.IsZero() || !lastSeen(ev).Before(since)
}

// lastSeen is when ev last happened, from whichever of the old and new event fields is set.
func lastSeen(ev *corev1.Event) time.Time {
	var series time.Time
	if ev.Series != nil {
		series = ev.Series.LastObservedTime.Time
	}
	for _, t := range []time.Time{series, ev.LastTimestamp.Time, ev.EventTime.Time, ev.FirstTimestamp.Time, ev.CreationTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// EventsTable is the events as `kubectl get events` would show them, oldest first.
func EventsTable(events []corev1.Event) string {
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b corev1.Event) int { return lastSeen(&a).Compare(lastSeen(&b)) })
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "LAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tMESSAGE")
	for _, ev := range sorted {
		obj := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
		if ev.InvolvedObject.Namespace != "" {
			obj = ev.InvolvedObject.Namespace + "/" + obj
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", lastSeen(&ev).UTC().Format(time.RFC3339), ev.Type, ev.Reason, obj,
			cmp.Or(ev.Count, 1), strings.ReplaceAll(ev.Message, "\n", " "))
	}
	w.Flush()
	return sb.String()
}
