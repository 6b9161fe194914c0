package statusview

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// AdoptNode is what `mco adopt NODE` (undo: `--undo`) tells the admin about one node once its
// approval is set or removed, or why it is refused: a node mco manages already has nothing to
// adopt (its approval would never be read).
func AdoptNode(n *corev1.Node, pools []mcfgv1.MachineConfigPool, undo bool) (string, error) {
	if rollout.Managed(n) {
		cfg := n.Annotations[protocol.CurrentConfigAnnotation]
		if cfg == "" {
			return "", fmt.Errorf("node %s is already being adopted (desiredConfig %s): nothing to approve or withdraw; `mco daemon revert` on the node returns it to the host's own files",
				n.Name, n.Annotations[protocol.DesiredConfigAnnotation])
		}
		return "", fmt.Errorf("node %s is already managed by mco (currentConfig %s): nothing to adopt", n.Name, cfg)
	}
	if undo {
		return fmt.Sprintf("node/%s: adoption approval withdrawn", n.Name), nil
	}
	ptrs := make([]*mcfgv1.MachineConfigPool, len(pools))
	for i := range pools {
		ptrs[i] = &pools[i]
	}
	primary, err := rollout.PrimaryPool(n, ptrs)
	if err != nil || primary == "" {
		why := rollout.NoPool(n, ptrs)
		if err != nil {
			why = []string{err.Error()}
		}
		return fmt.Sprintf("node/%s: adoption approved, but no pool manages the node (%s): it is adopted once a pool selects it", n.Name, strings.Join(why, "; ")), nil
	}
	pool := ptrs[slices.IndexFunc(ptrs, func(p *mcfgv1.MachineConfigPool) bool { return p.Name == primary })]
	if a, ok := rollout.AwaitingAdoption(n, pool); ok {
		if a.Refused {
			return fmt.Sprintf("node/%s: adoption approved, but it %s: approving does not help until the config or the host changes", n.Name, a.Plan.Summary()), nil
		}
		return fmt.Sprintf("node/%s: adoption approved: %s; it starts within mcp/%s's maxUnavailable", n.Name, a.Plan.Summary(), pool.Name), nil
	}
	return fmt.Sprintf("node/%s: adoption approved; its agent has not published what adopting into mcp/%s's %s would do yet: the node is updated as its agent then plans, without asking again",
		n.Name, pool.Name, orDash(pool.Spec.Configuration.Name)), nil
}

// AdoptPool is what `mco adopt --pool POOL` (undo: `--undo`) tells the admin: which of the
// pool's nodes wait for adoption now (approval covers those that wait later too).
func AdoptPool(pool *mcfgv1.MachineConfigPool, pools []mcfgv1.MachineConfigPool, nodes []corev1.Node, undo bool) string {
	if undo {
		return fmt.Sprintf("mcp/%s: adoption approval withdrawn; nodes approved one by one (`mco adopt NODE`) stay approved, adoptions already started go on", pool.Name)
	}
	ptrs := make([]*mcfgv1.MachineConfigPool, len(pools))
	for i := range pools {
		ptrs[i] = &pools[i]
	}
	parsed := rollout.NewPools(ptrs)
	var waiting []string
	for i := range nodes {
		n := &nodes[i]
		if primary, _ := parsed.PrimaryPool(n); primary != pool.Name {
			continue
		}
		if _, ok := rollout.AwaitingAdoption(n, pool); ok {
			waiting = append(waiting, n.Name)
		}
	}
	slices.Sort(waiting)
	now := "none waits now"
	if len(waiting) > 0 {
		now = fmt.Sprintf("%d wait now: %s", len(waiting), strings.Join(waiting, ", "))
	}
	return fmt.Sprintf("mcp/%s: adoption approved for every node of the pool mco did not boot, now and later (%s); they start within the pool's maxUnavailable", pool.Name, now)
}
