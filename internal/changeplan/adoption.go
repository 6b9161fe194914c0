package changeplan

import (
	"cmp"
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/rollout"
)

// Adoption is a node of the pool mco did not boot, waiting for adoption into the pool's target,
// with the plan its agent published: what adopting it writes (each file's diff or why there is
// none), the units, the OS fields, the disruption. This plan is the agent's, made on the host;
// the cluster cannot compute it.
type Adoption struct {
	Node string `json:"node"`
	// Approved: adopt=true on the node or its pool; the node controller adopts it within the
	// pool's maxUnavailable.
	Approved bool          `json:"approved"`
	Plan     adoption.Plan `json:"plan"`
	// PlanError says why the published plan cannot be read (Plan then holds only its target).
	PlanError string `json:"planError,omitempty"`
	// Note says what the change does to this adoption: a new rendered config is offered anew.
	Note string `json:"note,omitempty"`
}

// adoptions lists the pool's nodes waiting for adoption, by name. rendered is the pool's
// rendered config after the change: when it differs from the target the plans were made for,
// each node is offered it and its agent compares the host again.
func adoptions(pool *mcfgv1.MachineConfigPool, unmanaged []*corev1.Node, rendered string) []Adoption {
	var out []Adoption
	for _, n := range unmanaged {
		a, ok := rollout.AwaitingAdoption(n, pool)
		if !ok {
			continue
		}
		ad := Adoption{Node: n.Name, Approved: a.Approved, Plan: a.Plan, PlanError: a.PlanError}
		if rendered != "" && rendered != a.Plan.Target {
			ad.Note = fmt.Sprintf("this plan is for %s; once the pool targets %s the node is offered it and its agent compares the host again", a.Plan.Target, rendered)
			if a.Approved {
				ad.Note += " (the approval stands: the node is then adopted as that new plan says)"
			}
		}
		out = append(out, ad)
	}
	slices.SortFunc(out, func(a, b Adoption) int { return cmp.Compare(a.Node, b.Node) })
	return out
}

// Disrupts: an approved adoption that drains or reboots the node.
func (a Adoption) Disrupts() bool {
	return a.Approved && len(a.Plan.Refused) == 0 && (a.Plan.Drain || a.Plan.Reboot)
}
