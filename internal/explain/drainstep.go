package explain

import (
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/pacing"
)

// drainStep is the step of the node's blocked or skipped drain (statusview.DrainStep), "" when
// its drain is neither.
func (e nodeExplainer) drainStep() string {
	if e.pool == nil {
		return ""
	}
	return pacing.DrainStep(e.n, e.pool, e.c.members(e.pool), e.c.Policies, e.c.Now)
}

// drainStepLines names, for a pool, each node whose drain is blocked or was skipped and its step.
func drainStepLines(c Cluster, pool *mcfgv1.MachineConfigPool, members []*corev1.Node) []string {
	var lines []string
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for _, n := range sorted {
		if step := pacing.DrainStep(n, pool, members, c.Policies, c.Now); step != "" {
			lines = append(lines, bound(fmt.Sprintf("node %s: %s", n.Name, step)))
		}
	}
	if extra := len(lines) - maxNamedNodes; extra > 0 {
		lines = append(lines[:maxNamedNodes], fmt.Sprintf("and %d more nodes with blocked or skipped drains", extra))
	}
	return lines
}
