package node

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
)

// nodeStore is the manager's Node informer's store. Every reconcile reads every Node of the
// cluster, and a List, even without deep copies, copies each Node struct into a new slice: at
// 5,000 nodes that was most of what the controller allocated (bench/rollout -profile: 5 GB in
// one rollout, the garbage that set its peak memory). The store hands out the cached objects
// themselves, which this controller only reads: every write starts from a DeepCopy (withOwned,
// the adoption offer, the custom pool labels).
func nodeStore(mgr ctrl.Manager) (toolscache.Store, error) {
	inf, err := mgr.GetCache().GetInformer(context.Background(), &corev1.Node{})
	if err != nil {
		return nil, err
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("the cache's Node informer (%T) has no store to read", inf)
	}
	return sii.GetStore(), nil
}

// listNodes returns the cached Nodes; callers must not change them.
func (r *Reconciler) listNodes() []*corev1.Node {
	items := r.nodes.List()
	nodes := make([]*corev1.Node, 0, len(items))
	for _, o := range items {
		if n, ok := o.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
	}
	return nodes
}
