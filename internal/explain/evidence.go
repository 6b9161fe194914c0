package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// nodeAnnotations are the protocol's keys, in the order an update moves through them.
var nodeAnnotations = []string{
	protocol.CurrentConfigAnnotation, protocol.DesiredConfigAnnotation, protocol.StateAnnotation,
	protocol.ReasonAnnotation, protocol.DesiredDrainAnnotation, protocol.LastAppliedDrainAnnotation,
	protocol.DrainStartedAtAnnotation, protocol.DrainBlockedAnnotation, protocol.PostConfigActionAnnotation,
	// spec.drain's bookkeeping: a blocked stint, the blocked time so far, a skip.
	protocol.DrainBlockedSinceAnnotation, rolloutv1.DrainBlockedForAnnotation, rolloutv1.DrainSkippedAnnotation,
	// The adoption exchange; its plan is shown in Why (and whole by `mco plan`), not here.
	protocol.AdoptionTargetAnnotation, protocol.AdoptionAnnotation, protocol.AdoptAnnotation,
}

// annotationEvidence lists the node's protocol annotations that are set, by their short key.
func annotationEvidence(n *corev1.Node) []string {
	var out []string
	for _, k := range nodeAnnotations {
		if v, ok := n.Annotations[k]; ok && v != "" {
			out = append(out, fmt.Sprintf("annotation %s=%s", strings.TrimPrefix(k, "machineconfiguration.openshift.io/"), bound(v)))
		}
	}
	return out
}

// nodeConditionEvidence is the Node's Ready condition and any pressure the kubelet reports.
func nodeConditionEvidence(n *corev1.Node, now time.Time) []string {
	var out []string
	for _, c := range n.Status.Conditions {
		switch {
		case c.Type == corev1.NodeReady:
		case c.Status == corev1.ConditionTrue:
		default:
			continue
		}
		s := fmt.Sprintf("node condition %s=%s", c.Type, c.Status)
		if !c.LastTransitionTime.IsZero() {
			s += fmt.Sprintf(" since %s (%s ago)", stamp(c.LastTransitionTime.Time), age(now.Sub(c.LastTransitionTime.Time)))
		}
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		out = append(out, s)
	}
	if n.Spec.Unschedulable {
		out = append(out, "node is cordoned (spec.unschedulable=true)")
	}
	return out
}

// poolConditionEvidence lists the pool's True conditions, with their messages.
func poolConditionEvidence(p *mcfgv1.MachineConfigPool) []string {
	var out []string
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		s := fmt.Sprintf("mcp/%s condition %s=True", p.Name, c.Type)
		if c.Reason != "" {
			s += " reason " + c.Reason
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		out = append(out, bound(s))
	}
	return out
}

// machineConfigNodeEvidence is the MachineConfigNode's config versions and the conditions the
// agent has set True (the phases the update went through, or NodeDegraded, or a pinned image set
// it could not pull or pin: PinnedImageSetsDegraded, with the set, image and reason).
func machineConfigNodeEvidence(m *mcfgv1.MachineConfigNode) []string {
	if m == nil {
		return nil
	}
	s := fmt.Sprintf("machineconfignode/%s: pool %s, desired %s", m.Name, m.Spec.Pool.Name, m.Spec.ConfigVersion.Desired)
	if v := m.Status.ConfigVersion; v != nil {
		s += fmt.Sprintf(", status current %s desired %s", v.Current, v.Desired)
	}
	out := []string{s}
	var phases []string
	for _, c := range m.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		if c.Message != "" && (c.Type == string(mcfgv1.MachineConfigNodeNodeDegraded) || c.Type == string(mcfgv1.MachineConfigNodeUpdated) ||
			c.Type == string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded)) {
			out = append(out, bound(fmt.Sprintf("machineconfignode/%s condition %s: %s", m.Name, c.Type, c.Message)))
			continue
		}
		phases = append(phases, c.Type)
	}
	if len(phases) > 0 {
		out = append(out, fmt.Sprintf("machineconfignode/%s conditions True: %s", m.Name, strings.Join(phases, ", ")))
	}
	return out
}

// eventsAbout are the events whose object is kind/name, newest first.
func eventsAbout(events []corev1.Event, kind, name string) []corev1.Event {
	return newestFirst(events, func(e corev1.Event) bool {
		return e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name
	})
}

func newestFirst(events []corev1.Event, keep func(corev1.Event) bool) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if keep(e) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return eventTime(b).Compare(eventTime(a)) })
	return out
}

// mentions reports whether msg names name as a whole word, so node "worker-1" is not found in
// "worker-10".
func mentions(msg, name string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !nameByte(msg[start-1])) && (end == len(msg) || !nameByte(msg[end])) {
			return true
		}
		i = start + 1
	}
}

func nameByte(b byte) bool {
	return b == '-' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// eventEvidence names at most maxEvents events, newest first.
func eventEvidence(events []corev1.Event, now time.Time) []string {
	var out []string
	for _, e := range events[:min(len(events), maxEvents)] {
		s := fmt.Sprintf("event %s %s on %s/%s", cmp.Or(e.Type, corev1.EventTypeNormal), e.Reason, strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name)
		if t := eventTime(e); !t.IsZero() {
			s += fmt.Sprintf(" %s ago", age(now.Sub(t)))
		}
		if e.Count > 1 {
			s += fmt.Sprintf(" (x%d)", e.Count)
		}
		out = append(out, bound(s+": "+e.Message))
	}
	if extra := len(events) - maxEvents; extra > 0 {
		out = append(out, fmt.Sprintf("and %d older events", extra))
	}
	return out
}

// bound cuts a line an admin reads to maxLineLength characters.
func bound(s string) string {
	if len(s) <= maxLineLength {
		return s
	}
	return s[:maxLineLength-3] + "..."
}

// nameNodes names at most maxNamedNodes of names, then counts the rest.
func nameNodes(names []string) string {
	if len(names) <= maxNamedNodes {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedNodes], ", "), len(names)-maxNamedNodes)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// age is a duration as an admin reads it: "42s", "7m", "3h12m", "2d4h".
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
