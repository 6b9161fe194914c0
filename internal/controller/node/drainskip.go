package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// ReasonDrainSkipped is the Warning event on a Node whose blocked drain was skipped.
const ReasonDrainSkipped = "DrainSkipped"

// skipBlockedDrains carries out spec.drain.onBlocked: Skip for the pool's nodes whose drain for
// the target has been blocked for blockedTimeout while another node waits: one patch, with an
// optimistic lock, moves desiredConfig back to the node's currentConfig and records the skip
// (drain-skipped). If the node changed since it was read (its drain finished, its agent moved
// on) the patch conflicts and the pool is decided again. The agent, finding desiredConfig equal
// to its config, gives the drain-pending update up and asks for the uncordon (internal/daemon:
// settle); the drain controller stops evicting and uncordons. members comes back with the
// skipped nodes as written, so the same decision can give their slot to the next node; after is
// when the next skip is due (0 for none). Times are real ones: the drain controller writes
// when a drain became blocked by the wall clock.
func (r *Reconciler) skipBlockedDrains(ctx context.Context, pool *mcfgv1.MachineConfigPool, p *paced, members []*corev1.Node) (out []*corev1.Node, after time.Duration, err error) {
	target := pool.Spec.Configuration.Name
	if p == nil || p.policy == nil || !p.drain.Set || target == "" {
		return members, 0, nil
	}
	now := time.Now().UTC()
	out = members
	copied := false // members are the cache's nodes: never written in place
	var errs []error
	for i, n := range members {
		if !rollout.DrainingFor(n, target) {
			continue
		}
		b := drainpolicy.Read(n)
		step := drainpolicy.Decide(p.drain, b, now, rollout.OthersWaiting(out, n.Name, target))
		if step.Now != drainpolicy.Skip {
			if due := step.RequeueAfter(now); due > 0 && step.Next == drainpolicy.Skip && (after == 0 || due < after) {
				after = due
			}
			continue
		}
		if n.Annotations[protocol.DrainBlockedAnnotation] == "" {
			// The drain controller reports a drain blocked no later than blockedTimeout
			// (drain.ReportThreshold); the skip waits for that report, so it names what
			// blocked the drain, and the report's write wakes the pool.
			continue
		}
		skipped, err := r.skipDrain(ctx, n, target, p, b.Stint(now), now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !copied {
			out, copied = slices.Clone(members), true
		}
		out[i] = skipped
	}
	return out, after, errors.Join(errs...)
}

// skipDrain writes one skip and returns the node as written.
func (r *Reconciler) skipDrain(ctx context.Context, n *corev1.Node, target string, p *paced, blocked time.Duration, now time.Time) (*corev1.Node, error) {
	current := n.Annotations[protocol.CurrentConfigAnnotation]
	blocking := n.Annotations[protocol.DrainBlockedAnnotation]
	patched := n.DeepCopy()
	patched.Annotations[protocol.DesiredConfigAnnotation] = current
	patched.Annotations[rolloutv1.DrainSkippedAnnotation] = drainpolicy.SkipRecord(target, blocking, now)
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(n, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return nil, fmt.Errorf("node %s changed since it was read, so its blocked drain was not skipped; deciding again: %w", n.Name, err)
		}
		return nil, fmt.Errorf("skipping the blocked drain of node %s: %w", n.Name, err)
	}
	r.pending.record(n.Name, ownedOf(patched), patched.ResourceVersion)
	msg := fmt.Sprintf("The drain for %s was blocked for %s (spec.drain.blockedTimeout %s of mcprollout/%s): the node goes back to %s and is uncordoned, and is tried again after the pool's other nodes",
		target, blocked.Round(time.Second), p.drain.BlockedTimeout, p.policy.Name, current)
	if blocking != "" {
		msg += "; blocked by: " + blocking
	}
	r.Recorder.Event(n, corev1.EventTypeWarning, ReasonDrainSkipped, msg)
	return patched, nil
}

// clearDrainNotes removes the drain bookkeeping a node no longer needs (drainpolicy.Stale): once
// it is Done on the target, and a skip of a target the pool no longer has. A merge patch of
// those keys alone, so it never conflicts with the agent's or the drain controller's writes.
func (r *Reconciler) clearDrainNotes(ctx context.Context, members []*corev1.Node, target string) error {
	var errs []error
	for _, n := range members {
		if !drainpolicy.HasNotes(n) {
			continue // nearly every node: no need to work out whether it is done
		}
		done := rollout.UpdatedTo(n, target) && n.Annotations[protocol.CurrentConfigAnnotation] == target
		keys := drainpolicy.Stale(n, target, done)
		if len(keys) == 0 {
			continue
		}
		patched := n.DeepCopy()
		for _, k := range keys {
			delete(patched.Annotations, k)
		}
		if err := r.Client.Patch(ctx, patched, client.MergeFrom(n)); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("node %s: removing %v: %w", n.Name, keys, err))
		}
	}
	return errors.Join(errs...)
}
