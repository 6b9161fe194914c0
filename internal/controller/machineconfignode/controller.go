package machineconfignode

import (
	"context"
	"fmt"
	"maps"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// ReasonInvalidDesiredConfig is the Warning event on a Node whose desiredConfig annotation
// cannot be a MachineConfigNode's desired config.
const ReasonInvalidDesiredConfig = "InvalidDesiredConfig"

// Reconciler keeps one Node's MachineConfigNode per reconcile; requests are Node names, which
// are also the objects' names.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder

	// reader reads MachineConfigNodes from the API server, when their spec is not known.
	reader client.Reader
	specs  specs
}

// machineConfigNodeKind is the kind of the metadata this controller caches.
var machineConfigNodeKind = mcfgv1.GroupVersion.WithKind("MachineConfigNode")

// SetupWithManager registers the controller: Nodes whose labels (pool membership) or
// desiredConfig changed, MachineConfigNodes whose spec changed or that were deleted (put back),
// and pools created, deleted or given another nodeSelector, which may have moved nodes (every
// Node again).
//
// MachineConfigNodes are watched for their metadata alone. The agent writes each one's status
// twice per update, and a full watch delivered every write as JSON, the status and its dozen
// conditions included, which this controller decoded only to drop (CacheByObject): in a
// 5,000-node rollout that decoding was the largest part of the controller process's CPU after
// the node controller's decisions (bench/rollout -profile). The metadata comes as protobuf, and
// carries what decides a reconcile besides the spec (owners, annotations, the generation).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.reader = mgr.GetAPIReader()
	return ctrl.NewControllerManagedBy(mgr).
		Named("machineconfignode").
		For(&corev1.Node{}, builder.WithPredicates(nodeChange)).
		WatchesMetadata(&mcfgv1.MachineConfigNode{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}, r.notOwnWrite())).
		Watches(&mcfgv1.MachineConfigPool{}, handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, &corev1.NodeList{}, "nodes for a pool event", client.UnsafeDisableDeepCopy)), builder.WithPredicates(poolMembershipChange)).
		// Each reconcile is one patch round trip: with 2 workers, a 5,000-node rollout's
		// MachineConfigNodes fell 20 s behind their Nodes (bench/rollout), the API server's
		// latency under load, not this controller's CPU, being the bound.
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Complete(r)
}

// notOwnWrite drops the creation or spec change of a MachineConfigNode that this controller
// wrote and whose spec it knows at that generation: its own write's echo, which would only
// reconcile the Node's object again to find nothing to do (half of this controller's
// reconciles in a rollout). Another writer's change, deletions, and objects it does not know
// (after a restart) pass.
func (r *Reconciler) notOwnWrite() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !r.specs.knows(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !r.specs.knows(e.ObjectNew) },
	}
}

// poolMembershipChange passes pools created or deleted and those whose nodeSelector changed:
// nothing else of a pool decides which pool a node is in (rollout.PrimaryPool). A new target
// (spec.configuration) bumps the generation too, and would reconcile every node of the cluster
// for nothing at the start of each rollout.
var poolMembershipChange = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*mcfgv1.MachineConfigPool), e.ObjectNew.(*mcfgv1.MachineConfigPool)
		return !equality.Semantic.DeepEqual(o.Spec.NodeSelector, n.Spec.NodeSelector)
	},
}

// nodeChange drops Node updates that cannot change its MachineConfigNode: heartbeats, the
// agent's annotations, cordons.
var nodeChange = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
		return !maps.Equal(o.Labels, n.Labels) ||
			o.Annotations[protocol.DesiredConfigAnnotation] != n.Annotations[protocol.DesiredConfigAnnotation] ||
			mirroredChanged(o, n)
	},
}

func mirroredChanged(o, n *corev1.Node) bool {
	for _, k := range machineconfignode.MirroredAnnotations {
		if o.Annotations[k] != n.Annotations[k] {
			return true
		}
	}
	return false
}

// Reconcile creates, updates or deletes the Node's MachineConfigNode.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	have, err := r.current(ctx, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	want, keep, err := r.wanted(ctx, req.Name)
	if err != nil || keep {
		return reconcile.Result{}, err
	}
	switch {
	case want == nil && have == nil:
		return reconcile.Result{}, nil
	case want == nil:
		// The Node is gone or no pool manages it. The garbage collector would delete the object
		// with its Node, but not when the Node only left its pools.
		err := r.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID})
		r.specs.forget(have.Name)
		return reconcile.Result{}, client.IgnoreNotFound(err)
	case have == nil:
		err := r.Client.Create(ctx, want)
		if apierrors.IsAlreadyExists(err) {
			return reconcile.Result{RequeueAfter: time.Second}, nil // the cache is behind
		}
		if err == nil {
			// The answer is the object as created.
			r.specs.set(want.Name, known{uid: want.UID, generation: want.Generation, spec: want.Spec})
		}
		return reconcile.Result{}, err
	}
	next, changed := machineconfignode.Reconciled(have, want)
	if !changed {
		return reconcile.Result{}, nil
	}
	// A merge patch of spec and owners only: the agent writes the status concurrently. Nothing
	// reads the object the API server answers with, so it is asked for as metadata alone
	// (protobuf): decoding the whole object, the agent's status in JSON, was most of this
	// controller's CPU per write in a 5,000-node rollout (bench/rollout -profile).
	data, err := reconciledPatch(have, next)
	if err != nil {
		return reconcile.Result{}, err
	}
	written := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: next.Name}}
	written.SetGroupVersionKind(mcfgv1.GroupVersion.WithKind("MachineConfigNode"))
	if err := r.Client.Patch(ctx, written, client.RawPatch(types.MergePatchType, data)); err != nil {
		r.specs.forget(have.Name)
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if k, ok := afterPatch(have, next, written); ok {
		r.specs.set(have.Name, k)
	} else {
		r.specs.forget(have.Name)
	}
	return reconcile.Result{}, nil
}

// reconciledPatch is the merge patch from have to next = machineconfignode.Reconciled(have, ...):
// what client.MergeFrom(have).Data(next) computes, computed over the fields Reconciled changes
// alone (spec, owners, annotations), the rest being the same in both. Serializing and diffing
// whole objects twice per write was a third of this controller's CPU.
func reconciledPatch(have, next *mcfgv1.MachineConfigNode) ([]byte, error) {
	changed := func(m *mcfgv1.MachineConfigNode) *mcfgv1.MachineConfigNode {
		return &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Annotations: m.Annotations, OwnerReferences: m.OwnerReferences}, Spec: m.Spec}
	}
	return client.MergeFrom(changed(have)).Data(changed(next))
}

// current is the named MachineConfigNode as the API server has it, its status aside (nil when
// there is none): the metadata from the cache, and the spec this controller last read or wrote
// if the object is still at that generation, else as read from the API server. Reads are rare:
// this controller writes nearly every change of a spec itself, and knows what it wrote; another
// writer's change moves the generation, which wakes this controller and makes it read.
func (r *Reconciler) current(ctx context.Context, name string) (*mcfgv1.MachineConfigNode, error) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(machineConfigNodeKind)
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, meta); err != nil {
		if apierrors.IsNotFound(err) {
			r.specs.forget(name)
			return nil, nil
		}
		return nil, err
	}
	if spec, ok := r.specs.of(meta); ok {
		return &mcfgv1.MachineConfigNode{ObjectMeta: meta.ObjectMeta, Spec: spec}, nil
	}
	have := &mcfgv1.MachineConfigNode{}
	if err := r.reader.Get(ctx, client.ObjectKey{Name: name}, have); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted since the cache saw it; its deletion wakes this controller again.
			r.specs.forget(name)
			return nil, nil
		}
		return nil, err
	}
	r.specs.set(name, known{uid: have.UID, generation: have.Generation, spec: have.Spec})
	// Only spec, owners and annotations are written, from a diff against the object read.
	have.Status = mcfgv1.MachineConfigNodeStatus{}
	return have, nil
}

// wanted is the MachineConfigNode the named Node should have, nil for none (the Node is gone
// or has no pool). keep: leave whatever there is alone, the Node's desiredConfig is no name
// (reported as a Warning event on it; the next change of the annotation is looked at again).
func (r *Reconciler) wanted(ctx context.Context, name string) (want *mcfgv1.MachineConfigNode, keep bool, err error) {
	node := &corev1.Node{}
	// Read only (For builds its own maps): no copy of the Node for each of two reconciles per update.
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, node, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, client.IgnoreNotFound(err)
	}
	if !node.DeletionTimestamp.IsZero() {
		return nil, false, nil
	}
	var pools mcfgv1.MachineConfigPoolList
	// Read only (PrimaryPool): no copy of every pool for each of the two reconciles per update.
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, err
	}
	ps := make([]*mcfgv1.MachineConfigPool, len(pools.Items))
	for i := range pools.Items {
		ps[i] = &pools.Items[i]
	}
	// Two custom pools: the node controller leaves the node alone and reports it.
	pool, _ := rollout.PrimaryPool(node, ps)
	want, err = machineconfignode.For(node, pool)
	if err != nil {
		r.Recorder.Event(node, corev1.EventTypeWarning, ReasonInvalidDesiredConfig, fmt.Sprintf("MachineConfigNode not written: %v", err))
		return nil, true, nil
	}
	return want, false, nil
}
