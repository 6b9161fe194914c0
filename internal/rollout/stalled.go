package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// DefaultStallThreshold is how long a Ready node may take to finish moving to its target before
// its pool reports it: far longer than a drain, an apply and a reboot take (a drain blocked by a
// budget, a degraded or NotReady node are reported on their own), short enough that a rollout
// never waits silently for an agent that is not coming.
const DefaultStallThreshold = 30 * time.Minute

// Stalled is a Ready node that was given its target long ago and has not finished moving to it,
// with what its agent last said.
type Stalled struct {
	Node, Config string
	Since        time.Time
	// State and Current are the agent's report (state, currentConfig).
	State, Current string
}

func (s Stalled) String() string {
	st := s.State
	if st == "" {
		st = "nothing"
	}
	why := fmt.Sprintf("its agent reports %s on %s", st, orNone(s.Current))
	if protocol.NodeState(s.State) == protocol.NodeDone && s.Current != s.Config {
		why += ": it has not started the update; is its agent running?"
	}
	return fmt.Sprintf("Node %s was given %s at %s and has not finished moving to it (%s)", s.Node, s.Config, s.Since.UTC().Format(time.RFC3339), why)
}

// StallOf says whether n has been updating to the target it was given (TargetedAnnotation) for
// at least threshold; when it has not crossed it yet, left is how long until it does (0 for a
// node that is not on its way: not updating, or reported otherwise, NotReady (unresponsive),
// degraded, or with a drain blocked by a budget). The pool's UpdateStalled and `mco explain`
// both ask it.
func StallOf(n *corev1.Node, threshold time.Duration, now time.Time) (s Stalled, stalled bool, left time.Duration) {
	c := configOf(n)
	if !updating(n, c) || !Healthy(n) || c.degraded() || n.Annotations[protocol.DrainBlockedAnnotation] != "" {
		return Stalled{}, false, 0
	}
	config, since, ok := protocol.ParseTargeted(n.Annotations[rolloutv1.TargetedAnnotation])
	if !ok || config != c.desired {
		return Stalled{}, false, 0
	}
	if left := since.Add(threshold).Sub(now); left > 0 {
		return Stalled{}, false, left
	}
	return Stalled{Node: n.Name, Config: config, Since: since, State: string(c.state), Current: c.current}, true, 0
}

// stalled finds the nodes StallOf names, by name, and how long until the next one crosses the
// threshold (0 when none is on its way).
func stalled(nodes []*corev1.Node, threshold time.Duration, now time.Time) ([]Stalled, time.Duration) {
	var out []Stalled
	var recheck time.Duration
	for _, n := range nodes {
		s, ok, left := StallOf(n, threshold, now)
		switch {
		case ok:
			out = append(out, s)
		case left > 0 && (recheck == 0 || left < recheck):
			recheck = left
		}
	}
	slices.SortFunc(out, func(a, b Stalled) int { return strings.Compare(a.Node, b.Node) })
	return out, recheck
}

// setStalled writes the UpdateStalled condition (mco only, not part of Degraded: nothing failed
// that the pool knows of, but nothing moves either).
func setStalled(st *mcfgv1.MachineConfigPoolStatus, stuck []Stalled, threshold time.Duration, now metav1.Time) {
	if len(stuck) == 0 {
		if poolcondition.Get(st, poolcondition.UpdateStalled) != nil {
			poolcondition.Set(st, poolcondition.UpdateStalled, corev1.ConditionFalse, "", "", now)
		}
		return
	}
	poolcondition.Set(st, poolcondition.UpdateStalled, corev1.ConditionTrue, "NoProgress",
		fmt.Sprintf("%s (threshold %s); see each node's agent: kubectl -n openshift-machine-config-operator get pods -o wide --field-selector spec.nodeName=NODE, then its log",
			boundedList(stringsOf(stuck)), threshold), now)
}
