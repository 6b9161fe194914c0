package rollout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
)

// Held: an admin holds the node back (`mco hold`): it is never chosen for an update, whatever
// else it is. Only "true" holds; any other value is reported by HoldProblems, so a typo such as
// "yes" is not taken silently for a hold that is not in effect.
func Held(n *corev1.Node) bool { return n.Annotations[rolloutv1.HoldAnnotation] == "true" }

// Priority is the node's update priority: higher is chosen first. Absent, empty or unparsable
// counts as 0 (HoldProblems reports the unparsable).
func Priority(n *corev1.Node) int {
	p, err := parsePriority(n)
	if err != nil {
		return 0
	}
	return p
}

func parsePriority(n *corev1.Node) (int, error) {
	v := n.Annotations[rolloutv1.UpdatePriorityAnnotation]
	if v == "" {
		return 0, nil
	}
	p, err := strconv.ParseInt(v, 10, 32)
	return int(p), err
}

// HoldProblems names each node whose hold or priority annotation does not say what it looks
// like it says: a priority that is no integer (counted as 0) or a hold other than "true" or
// "false" (not held).
func HoldProblems(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		if _, err := parsePriority(n); err != nil {
			out = append(out, fmt.Sprintf("node %s: annotation %s is %q, not an integer; counting it as 0",
				n.Name, rolloutv1.UpdatePriorityAnnotation, n.Annotations[rolloutv1.UpdatePriorityAnnotation]))
		}
		if v, ok := n.Annotations[rolloutv1.HoldAnnotation]; ok && v != "true" && v != "false" {
			out = append(out, fmt.Sprintf("node %s: annotation %s is %q; only \"true\" holds a node, so it is not held",
				n.Name, rolloutv1.HoldAnnotation, v))
		}
	}
	return out
}

// OnlyHeldBehind: the pool waits for nothing but held nodes. At least one node is not on the
// target, and every such node is held and idle (Done on its config, no reboot queued): nothing
// moves until an admin releases one, so the pool is not Updating, and not stalled either.
func OnlyHeldBehind(nodes []*corev1.Node, target string) bool {
	behind := false
	for _, n := range nodes {
		c := configOf(n)
		if c.updatedTo(target) {
			continue
		}
		if !Held(n) || updating(n, c) {
			return false
		}
		behind = true
	}
	return behind
}

// setHeld reports the held nodes not on the target, which the pool waits for (NodesHeld). A
// pool that never had one gets no condition at all, so a cluster that holds no node shows
// exactly the conditions it did before holds existed.
func setHeld(st *mcfgv1.MachineConfigPoolStatus, held []*corev1.Node, now metav1.Time) {
	if len(held) == 0 {
		if poolcondition.Get(st, poolcondition.NodesHeld) != nil {
			poolcondition.Set(st, poolcondition.NodesHeld, corev1.ConditionFalse, "", "", now)
		}
		return
	}
	msg := "Waiting for held nodes: " + nameNodes(held, nil, func(n *corev1.Node) string {
		return fmt.Sprintf("%s (on %s)", n.Name, orNone(current(n)))
	}) + ". Release them with `mco hold --undo " + releaseArgs(held) + "`"
	poolcondition.Set(st, poolcondition.NodesHeld, corev1.ConditionTrue, fmt.Sprintf("%d nodes are held", len(held)), msg, now)
}

// releaseArgs is the node names the release command takes: all of them while the message
// names all of them, else a placeholder.
func releaseArgs(held []*corev1.Node) string {
	if len(held) > maxNamedNodes {
		return "NODE..."
	}
	out := make([]string, len(held))
	for i, n := range held {
		out[i] = n.Name
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
