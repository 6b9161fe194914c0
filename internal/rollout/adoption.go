package rollout

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Adoption of a node mco did not boot (protocol's adoption exchange). The node controller's
// side: offer the pool's target to each unmanaged node of the pool, and, once the node's agent
// reported what adopting would do and the admin approved, point the node at the target like
// any other node of the pool, within maxUnavailable.

// Offer is a write of the adoption annotations the node controller keeps on a node: its
// adoption-target (Target "" removes it) and, with SpentApproval, the removal of the admin's
// adopt=true.
type Offer struct {
	Node   string
	Target string
	// SpentApproval: the node's adoption is over (see approvalSpent), so its approval goes.
	SpentApproval bool
}

// Awaiting is a node whose agent reported that adopting it into the pool's target changes the
// host, and which waits for the admin (or, approved, for capacity).
type Awaiting struct {
	Node string
	// Plan is what the agent published; only Target is known when the plan is missing or does
	// not parse (then PlanError says why).
	Plan      adoption.Plan
	PlanError string
	// Approved: the admin set adopt=true on the node or on the pool.
	Approved bool
	// Refused: the plan names something the host cannot apply; approval does not help.
	Refused bool
}

// Phrase is how a condition message and an event name the node.
func (a Awaiting) Phrase() string {
	summary := a.Plan.Summary()
	if a.PlanError != "" {
		summary = fmt.Sprintf("waits for adoption into %s (its plan is unreadable: %s)", a.Plan.Target, a.PlanError)
	}
	switch {
	case a.Refused:
		return fmt.Sprintf("Node %s %s", a.Node, summary)
	case a.Approved:
		return fmt.Sprintf("Node %s (approved, waiting for maxUnavailable): %s", a.Node, summary)
	}
	return fmt.Sprintf("Node %s: %s", a.Node, summary)
}

// wantedOffer is the adoption-target a node of a pool whose target is target should carry:
// the target while the node is unmanaged (the agent ignores it once the node is managed, and a
// stale offer would only mislead whoever reads the Node), none once it is managed.
func wantedOffer(n *corev1.Node, target string) string {
	if Managed(n) {
		return ""
	}
	return target
}

// approvalSpent: the node carries adopt=true and runs the config it was given (Done), so any
// adoption the approval was for is over. Left in place, it would approve the node's next
// adoption (after `mco daemon revert` returns the host to its own files) before its agent
// published what that one writes. Until Done (updating, or failing) the node keeps it.
func approvalSpent(n *corev1.Node) bool {
	return n.Annotations[protocol.AdoptAnnotation] == protocol.AdoptApproved && Done(n)
}

// offers lists the writes that make every node of the pool carry its wanted offer and no
// spent approval. Offers use no capacity: nothing on the host changes until the node is given
// desiredConfig.
func offers(nodes []*corev1.Node, target string) []Offer {
	var out []Offer
	for _, n := range nodes {
		want, spent := wantedOffer(n, target), approvalSpent(n)
		if n.Annotations[protocol.AdoptionTargetAnnotation] != want || spent {
			out = append(out, Offer{Node: n.Name, Target: want, SpentApproval: spent})
		}
	}
	return out
}

// StrayOffer reports whether node carries an adoption-target although no pool manages it (its
// labels changed, or its pool is gone): the offer is to be withdrawn.
func StrayOffer(node *corev1.Node, pools *Pools) bool {
	if node.Annotations[protocol.AdoptionTargetAnnotation] == "" {
		return false
	}
	primary, err := pools.PrimaryPool(node)
	return primary == "" || err != nil
}

// AwaitingAdoption reports whether the node's agent said adopting it into target changes the
// host (adoption=Pending) for target itself, not for an earlier target of the pool (the agent
// compares the host again when the offer changes, and a plan for another config says nothing
// about this one). The plan's own target decides; without a readable plan, the offer.
func AwaitingAdoption(n *corev1.Node, pool *mcfgv1.MachineConfigPool) (Awaiting, bool) {
	target := pool.Spec.Configuration.Name
	if target == "" || Managed(n) || n.Annotations[protocol.AdoptionAnnotation] != protocol.AdoptionPending {
		return Awaiting{}, false
	}
	a := Awaiting{Node: n.Name, Approved: AdoptionApproved(n, pool)}
	raw := n.Annotations[protocol.AdoptionPlanAnnotation]
	plan, err := adoption.Decode(raw)
	switch {
	case raw == "":
		a.Plan, a.PlanError = adoption.Plan{Target: n.Annotations[protocol.AdoptionTargetAnnotation]}, "the agent published none"
	case err != nil:
		a.Plan, a.PlanError = adoption.Plan{Target: n.Annotations[protocol.AdoptionTargetAnnotation]}, err.Error()
	default:
		a.Plan = plan
	}
	a.Refused = len(a.Plan.Refused) > 0
	return a, a.Plan.Target == target
}

// AdoptionApproved: the admin set adopt=true on the node or on its pool. Only the exact value
// approves: a typo must not adopt a node.
func AdoptionApproved(n *corev1.Node, pool *mcfgv1.MachineConfigPool) bool {
	return n.Annotations[protocol.AdoptAnnotation] == protocol.AdoptApproved ||
		pool.Annotations[protocol.AdoptAnnotation] == protocol.AdoptApproved
}

// adoptionCandidates are the nodes that may be given the pool's target like any healthy node:
// awaiting adoption into it, approved, not refused, and Ready. Until chosen they are not
// counted, so they use no capacity while they wait.
func adoptionCandidates(unmanaged []*corev1.Node, pool *mcfgv1.MachineConfigPool) (awaiting []Awaiting, candidates []*corev1.Node) {
	for _, n := range unmanaged {
		a, ok := AwaitingAdoption(n, pool)
		if !ok {
			continue
		}
		awaiting = append(awaiting, a)
		if a.Approved && !a.Refused && Ready(n) {
			candidates = append(candidates, n)
		}
	}
	return awaiting, candidates
}

// maxNamedAdoptions bounds the nodes the NodesAwaitingAdoption message names: each comes with
// its plan's summary, longer than a degraded node's phrase.
const maxNamedAdoptions = 5

// setAwaitingAdoption writes the NodesAwaitingAdoption condition: True while any node waits
// for adoption into the target, naming up to maxNamedAdoptions with what adopting would do and
// how to approve; False otherwise. Not part of Degraded: waiting for the admin is the exchange
// working as designed.
func setAwaitingAdoption(st *mcfgv1.MachineConfigPoolStatus, pool string, awaiting []Awaiting, now metav1.Time) {
	if len(awaiting) == 0 {
		poolcondition.Set(st, poolcondition.NodesAwaitingAdoption, corev1.ConditionFalse, "", "", now)
		return
	}
	reason, unapproved := "Approved", 0
	for _, a := range awaiting {
		if !a.Approved && !a.Refused {
			unapproved++
		}
	}
	if unapproved > 0 {
		reason = "ApprovalRequired"
	}
	sorted := slices.Clone(awaiting)
	slices.SortFunc(sorted, func(a, b Awaiting) int { return strings.Compare(a.Node, b.Node) })
	parts := make([]string, 0, min(len(sorted), maxNamedAdoptions)+1)
	for i, a := range sorted {
		if i == maxNamedAdoptions {
			parts = append(parts, fmt.Sprintf("and %d more", len(awaiting)-maxNamedAdoptions))
			break
		}
		parts = append(parts, a.Phrase())
	}
	msg := strings.Join(parts, "; ")
	if unapproved > 0 {
		msg += fmt.Sprintf(". Approve with `mco adopt NODE` or `mco adopt --pool %s`; `mco plan --pool %s` shows each file's diff", pool, pool)
	}
	poolcondition.Set(st, poolcondition.NodesAwaitingAdoption, corev1.ConditionTrue, reason, msg, now)
}
