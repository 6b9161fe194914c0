package node

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cachedNodes reads every Node of the cluster on each reconcile. A List, even without deep
// copies, copies each Node struct into a new slice: at 5,000 nodes that was most of what the
// controller allocated (bench/rollout -profile: 5 GB in one rollout, the garbage that set its
// peak memory). The informer's store hands out the cached objects themselves, which this
// controller only reads: every write starts from a DeepCopy (withOwned, the adoption offer,
// the custom pool labels).
type cachedNodes struct {
	store toolscache.Store
}

// newCachedNodes uses the manager's Node informer's store where the cache exposes it.
func newCachedNodes(mgr ctrl.Manager) (*cachedNodes, error) {
	c := &cachedNodes{}
	inf, err := mgr.GetCache().GetInformer(context.Background(), &corev1.Node{})
	if err != nil {
		return nil, err
	}
	if sii, ok := inf.(toolscache.SharedIndexInformer); ok {
		c.store = sii.GetStore()
	}
	return c, nil
}

// listNodes returns the cached Nodes, from the informer's store where there is one (set up by
// SetupWithManager) and otherwise a List without deep copies; callers must not change them.
func (r *Reconciler) listNodes(ctx context.Context) ([]*corev1.Node, error) {
	if r.nodes != nil && r.nodes.store != nil {
		items := r.nodes.store.List()
		nodes := make([]*corev1.Node, 0, len(items))
		for _, o := range items {
			if n, ok := o.(*corev1.Node); ok {
				nodes = append(nodes, n)
			}
		}
		return nodes, nil
	}
	var list corev1.NodeList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	return nodes, nil
}
