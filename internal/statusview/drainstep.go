package statusview

import (
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/pacing"
)

// WithDrainSteps puts each blocked or skipped drain's step (pacing.DrainStep) in its node's Reason, after
// what the agent reported, for `mco status`.
func WithDrainSteps(rows []NodeRow, pools []mcfgv1.MachineConfigPool, nodes []corev1.Node, policies []rolloutv1.MachineConfigPoolRollout, now time.Time) []NodeRow {
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	members := map[string][]*corev1.Node{}
	for _, r := range rows {
		if n := byName[r.Name]; n != nil {
			members[r.Pool] = append(members[r.Pool], n)
		}
	}
	for i := range rows {
		n := byName[rows[i].Name]
		for j := range pools {
			if n == nil || pools[j].Name != rows[i].Pool {
				continue
			}
			if step := pacing.DrainStep(n, &pools[j], members[rows[i].Pool], policies, now); step != "" {
				if rows[i].Reason != "" {
					step = rows[i].Reason + "; " + step
				}
				rows[i].Reason = step
			}
		}
	}
	return rows
}
