package changeplan

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/pacing"
)

// drainNote is the step of the node's blocked or skipped drain (spec.drain of the policy pacing
// its pool), "" when there is none or the reading has no time.
func drainNote(n *corev1.Node, pool *mcfgv1.MachineConfigPool, members []*corev1.Node, c Cluster) string {
	if n == nil || c.Now.IsZero() {
		return ""
	}
	if step := pacing.DrainStep(n, pool, members, c.Rollouts, c.Now); step != "" {
		return "drain: " + step
	}
	return ""
}
