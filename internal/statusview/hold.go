package statusview

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// HoldChange is what `mco hold` (undo: `--undo`) does to one node as read: whether its hold
// annotation needs writing, and the line telling the admin what that means for the node.
func HoldChange(n *corev1.Node, undo bool) (write bool, line string) {
	value, annotated := n.Annotations[rolloutv1.HoldAnnotation]
	if undo {
		switch {
		case rollout.Held(n):
			return true, fmt.Sprintf("node/%s: released; it is updated with its pool again (within maxUnavailable) if it is behind", n.Name)
		case annotated:
			return true, fmt.Sprintf("node/%s: hold annotation %q removed (it did not hold the node: only \"true\" does)", n.Name, value)
		}
		return false, fmt.Sprintf("node/%s: not held; nothing to release", n.Name)
	}
	what := "held"
	if rollout.Held(n) {
		write, what = false, "already held"
	} else {
		write = true
	}
	if u := updateInProgress(n); u != "" {
		return write, fmt.Sprintf("node/%s: %s; %s is in progress and will finish; no further update starts on it until `mco hold --undo %s`", n.Name, what, u, n.Name)
	}
	return write, fmt.Sprintf("node/%s: %s; no update starts on it until `mco hold --undo %s`", n.Name, what, n.Name)
}

// updateInProgress names the update a hold does not stop: the node was given a config its agent
// has not reported Done (or failed) in, or has a reboot queued. "" when there is none.
func updateInProgress(n *corev1.Node) string {
	desired := n.Annotations[protocol.DesiredConfigAnnotation]
	if desired == "" || rollout.Degraded(n) || !rollout.Updating(n) {
		return ""
	}
	return "its update to " + desired
}

// TargetedMeanwhile says what a hold can no longer stop: the node controller gave the node a
// config between the read (before) and the hold's write (after), so that update goes on. ""
// when its desired config did not move.
func TargetedMeanwhile(before, after *corev1.Node) string {
	was, is := before.Annotations[protocol.DesiredConfigAnnotation], after.Annotations[protocol.DesiredConfigAnnotation]
	if was == is {
		return ""
	}
	return fmt.Sprintf("but the node controller gave it %s just before the hold: that update goes on and finishes", is)
}
