package statusview

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Phase is where a node stands in a rollout, as read from the annotation protocol.
type Phase string

const (
	PhaseWaiting   Phase = "waiting"   // not yet targeted at the pool's config
	PhaseQueued    Phase = "queued"    // targeted; the agent has not started
	PhaseDraining  Phase = "draining"  // the agent asked for a drain, not yet done
	PhaseCordoned  Phase = "cordoned"  // drained; the agent is about to apply
	PhaseApplying  Phase = "applying"  // the agent is writing the new config
	PhaseRebooting Phase = "rebooting" // a reboot is queued or under way
	PhaseDone      Phase = "done"      // on the pool's config
	PhaseDegraded  Phase = "degraded"  // the agent reported an error
	PhaseHeld      Phase = "held"      // not targeted, and held back by an admin (`mco hold`)
	// A node mco did not boot, not managed yet:
	PhaseJoining  Phase = "joining"  // no agent report yet (its pool offered it its config)
	PhaseAdoption Phase = "adoption" // its agent found what adopting it changes; waits for approval or room
)

// NodePhase reads node's phase relative to the pool's target config.
func NodePhase(n *corev1.Node, target string) Phase {
	a := n.Annotations
	if !rollout.Managed(n) {
		if a[protocol.AdoptionAnnotation] == protocol.AdoptionPending {
			return PhaseAdoption
		}
		return PhaseJoining
	}
	desired := a[protocol.DesiredConfigAnnotation]
	drainRequest, lastDrain := a[protocol.DesiredDrainAnnotation], a[protocol.LastAppliedDrainAnnotation]
	switch {
	case rollout.Degraded(n):
		return PhaseDegraded
	case a[protocol.PostConfigActionAnnotation] == protocol.PostConfigActionRebooting:
		return PhaseRebooting
	case rollout.UpdatedTo(n, target):
		return PhaseDone
	case desired != target && rollout.Held(n):
		return PhaseHeld
	case desired != target:
		return PhaseWaiting
	case drainRequest == protocol.DrainRequest(desired) && lastDrain != drainRequest:
		return PhaseDraining
	case drainRequest == protocol.DrainRequest(desired):
		return PhaseCordoned
	case protocol.NodeState(a[protocol.StateAnnotation]) == protocol.NodeWorking:
		return PhaseApplying
	default:
		return PhaseQueued
	}
}
