package node

import (
	"context"
	"errors"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Event reasons of the adoption of nodes mco did not boot, on the Node. Kept quiet: one when a
// node starts waiting for the admin, one when its adoption starts (the pool's SetDesiredConfig
// event names it too).
const (
	ReasonAdoptionPending = "AdoptionPending"
	ReasonAdoptionStarted = "AdoptionStarted"
)

// writeOffers writes the adoption-target annotations the decision asks for, and removes spent
// approvals. Each write holds only if the node has not changed since it was read: an agent
// seeding a node mco booted (currentConfig) wins over an offer made from a stale cache, an
// approval the admin set again meanwhile stays, and the node's update event brings the pool
// back with what the node is now. So a conflict is no error.
func (r *Reconciler) writeOffers(ctx context.Context, offers []rollout.Offer, nodes []*corev1.Node) error {
	if len(offers) == 0 {
		return nil // the usual case, without a map of every node
	}
	byName := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	var errs []error
	for _, o := range offers {
		n := byName[o.Node]
		if n == nil {
			continue
		}
		if err := r.writeOffer(ctx, n, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeOffer sets (Target "" removes) one node's adoption-target, and removes its adopt
// approval when spent.
func (r *Reconciler) writeOffer(ctx context.Context, n *corev1.Node, o rollout.Offer) error {
	patched := n.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	if o.Target == "" {
		delete(patched.Annotations, protocol.AdoptionTargetAnnotation)
	} else {
		patched.Annotations[protocol.AdoptionTargetAnnotation] = o.Target
	}
	if o.SpentApproval {
		delete(patched.Annotations, protocol.AdoptAnnotation)
	}
	err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(n, client.MergeFromWithOptimisticLock{}))
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("node %s: adoption annotations: %w", n.Name, err)
}

// withdrawStrayOffers removes the adoption-target of nodes no pool manages any more (their
// labels changed, their pool is gone): no pool's decision sees them, so the reconcile of any
// pool does it, as it settles custom boots.
func (r *Reconciler) withdrawStrayOffers(ctx context.Context, pools []*mcfgv1.MachineConfigPool, nodes []*corev1.Node) error {
	parsed := rollout.NewPools(pools)
	var errs []error
	for _, n := range nodes {
		if rollout.StrayOffer(n, parsed) {
			if err := r.writeOffer(ctx, n, rollout.Offer{Node: n.Name}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// reportAdoptions emits AdoptionPending once per node and target when a node starts waiting
// for the admin, and AdoptionStarted for each node whose adoption was written. A node already
// waiting when this process first decides its pool (the controller restarted) started
// waiting before: its agent reported that with its own AdoptionPending event, and an earlier
// controller with this one, so it is taken as reported.
func (r *Reconciler) reportAdoptions(pool *mcfgv1.MachineConfigPool, unmanaged []*corev1.Node, d rollout.Decision, started []string) {
	byName := make(map[string]*corev1.Node, len(unmanaged))
	for _, n := range unmanaged {
		byName[n.Name] = n
	}
	baseline := r.firstAdoptionLook(pool.Name)
	waiting := map[string]bool{}
	for _, a := range d.AwaitingAdoption {
		n := byName[a.Node]
		if n == nil || a.Approved {
			continue
		}
		waiting[a.Node] = true
		message := fmt.Sprintf("Waiting for approval to adopt the node into %s: %s. Approve with `mco adopt %s`; `mco plan --pool %s` shows the diffs",
			a.Plan.Target, a.Plan.Summary(), a.Node, pool.Name)
		if a.Refused {
			message = fmt.Sprintf("The node %s; the config or the host must change", a.Plan.Summary())
		}
		if baseline {
			r.markReported("adoption/"+a.Node, message)
		} else {
			r.eventOnce(n, "adoption/"+a.Node, corev1.EventTypeNormal, ReasonAdoptionPending, message)
		}
	}
	for _, n := range unmanaged {
		if !waiting[n.Name] {
			r.forgetWarning("adoption/" + n.Name)
		}
	}
	for _, name := range started {
		r.forgetWarning("adoption/" + name)
		n := byName[name]
		if n == nil {
			continue
		}
		summary := ""
		if a, ok := rollout.AwaitingAdoption(n, pool); ok {
			summary = ": " + a.Plan.Summary()
		}
		r.Recorder.Eventf(n, corev1.EventTypeNormal, ReasonAdoptionStarted, "Adoption approved; the node is updated to %s as planned%s", d.Target, summary)
	}
}

// firstAdoptionLook reports whether this is the first time this process reports the
// adoptions of pool, and notes that it is not any more.
func (r *Reconciler) firstAdoptionLook(pool string) bool {
	r.reportedMu.Lock()
	defer r.reportedMu.Unlock()
	if r.adoptionBaselines[pool] {
		return false
	}
	if r.adoptionBaselines == nil {
		r.adoptionBaselines = map[string]bool{}
	}
	r.adoptionBaselines[pool] = true
	return true
}

// markReported records message as emitted for key (see eventOnce) without emitting it.
func (r *Reconciler) markReported(key, message string) {
	r.reportedMu.Lock()
	r.reported[key] = message
	r.reportedMu.Unlock()
}
