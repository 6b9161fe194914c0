package rollback

import (
	"fmt"
	"slices"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Failure is what spec.onFailure: Rollback looks at in one reconcile of a pool.
type Failure struct {
	// Policy is the name of the MachineConfigPoolRollout selecting the pool.
	Policy string
	Nodes  []*corev1.Node
	// Unresponsive are the nodes NotReady past the threshold mid-update (rollout.Decision).
	Unresponsive []rollout.Unresponsive
	// Gate is why the policy's health gate fails on an updated node ("" when it passes);
	// during a canary's soak this is the canary failing it.
	Gate string
}

// OnFailure is the rollback a policy with spec.onFailure: Rollback writes when an update of
// pool towards its target failed: a node Degraded or Unreconcilable asked for the target (an
// apply error, a booted config that does not match, a node that reverted a broken boot), a
// node not back in time from its update, or the health gate failing on an updated node. nil
// when nothing failed, when there is nothing to return to (status.configuration is empty or
// already the target), or when a rollback annotation is already there (it is written once).
func OnFailure(pool *mcfgv1.MachineConfigPool, f Failure, now time.Time) *rolloutv1.Rollback {
	target, ran := pool.Spec.Configuration.Name, pool.Status.Configuration.Name
	if target == "" || ran == "" || ran == target {
		return nil
	}
	if _, held := pool.Annotations[rolloutv1.RollbackAnnotation]; held {
		return nil
	}
	var why []string
	for _, n := range f.Nodes {
		if rollout.Degraded(n) && n.Annotations[protocol.DesiredConfigAnnotation] == target {
			why = append(why, fmt.Sprintf("node %s failed to update to %s: %s", n.Name, target, orNone(n.Annotations[protocol.ReasonAnnotation])))
		}
	}
	slices.Sort(why)
	for _, u := range f.Unresponsive {
		if u.Config == target {
			why = append(why, u.String())
		}
	}
	if f.Gate != "" {
		why = append(why, "health gate: "+f.Gate)
	}
	if len(why) == 0 {
		return nil
	}
	reason := truncate(why[0], maxReason)
	if len(why) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(why)-1)
	}
	return &rolloutv1.Rollback{From: target, To: ran, By: ByPolicy(f.Policy), Reason: reason, At: now.UTC().Format(time.RFC3339)}
}

// maxReason bounds the reason taken from a node: an agent's error can be long, and it is
// repeated in the pool's annotation, condition and events.
const maxReason = 512

func truncate(s string, runes int) string {
	r := []rune(s)
	if len(r) <= runes {
		return s
	}
	return string(r[:runes]) + "…"
}
