package node

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeCache is the manager's cache for Nodes: each stripped of what no controller reads and
// what makes a real Node large. A kubelet lists every image it holds in status.images (tens of
// KiB on a busy node, the bulk of the object), attached volumes in volumesInUse and
// volumesAttached, and managedFields records every writer's fields; at 5,000 nodes they would
// be most of the controller's memory. The controllers write Nodes only by patches computed
// from the cached object, so a field missing here is never written back as missing.
func NodeCache() (client.Object, cache.ByObject) {
	return &corev1.Node{}, cache.ByObject{Transform: stripNode}
}

func stripNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	n.ManagedFields = nil
	n.Status.Images = nil
	n.Status.VolumesInUse = nil
	n.Status.VolumesAttached = nil
	return n, nil
}
