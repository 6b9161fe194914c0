package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// DefaultNotReadyThreshold is how long a node may stay NotReady during an update (a reboot
// included) before its pool reports it: long enough for a slow firmware and a full boot,
// short enough that nobody finds out from the next outage.
const DefaultNotReadyThreshold = 15 * time.Minute

// Unresponsive is a node that went NotReady in the middle of an update and has not come back.
type Unresponsive struct {
	Node string
	// Config is the rendered config the node was moving to.
	Config string
	Since  time.Time
}

func (u Unresponsive) String() string {
	return fmt.Sprintf("Node %s has not been Ready since %s while updating to %s", u.Node, u.Since.UTC().Format(time.RFC3339), u.Config)
}

// unresponsive finds the updating nodes NotReady for at least threshold, by name, and how long
// until the next one crosses it (0 when none is on its way).
func unresponsive(nodes []*corev1.Node, threshold time.Duration, now time.Time) ([]Unresponsive, time.Duration) {
	var out []Unresponsive
	var recheck time.Duration
	for _, n := range nodes {
		since, notReady := NotReadySince(n)
		if !notReady || !Updating(n) {
			continue
		}
		if left := since.Add(threshold).Sub(now); left > 0 {
			if recheck == 0 || left < recheck {
				recheck = left
			}
			continue
		}
		out = append(out, Unresponsive{Node: n.Name, Config: desired(n), Since: since})
	}
	slices.SortFunc(out, func(a, b Unresponsive) int { return strings.Compare(a.Node, b.Node) })
	return out, recheck
}

// setUnresponsive writes the NodeUnresponsive condition (part of Degraded, see poolcondition).
func setUnresponsive(st *mcfgv1.MachineConfigPoolStatus, lost []Unresponsive, threshold time.Duration, now metav1.Time) {
	if len(lost) == 0 {
		poolcondition.Set(st, poolcondition.NodeUnresponsive, corev1.ConditionFalse, "", "", now)
		return
	}
	poolcondition.Set(st, poolcondition.NodeUnresponsive, corev1.ConditionTrue, "NotReadyDuringUpdate",
		fmt.Sprintf("%s (threshold %s); no further nodes of this pool are started until it is Ready again, or deleted from the cluster if it is gone for good",
			boundedList(stringsOf(lost)), threshold), now)
}

// stringsOf is each of xs as its String method says it.
func stringsOf[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}
