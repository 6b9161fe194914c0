package machineconfignode

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/pinnedimages"
)

// CacheByObject keeps MachineConfigNodes in the manager's cache without most of their status:
// the agent writes it (every condition, in each write) and the controllers read only the pinned
// image sets' part of it (the pinnedimageset controller: status.pinnedImageSets and the two
// PinnedImageSets conditions, which stay). This controller caches their metadata alone
// (SetupWithManager). The status, a dozen conditions with their messages, is most of each object.
func CacheByObject() (client.Object, cache.ByObject) {
	return &mcfgv1.MachineConfigNode{}, cache.ByObject{Transform: stripStatus}
}

func stripStatus(obj any) (any, error) {
	// The transform of the kind applies to its metadata-only objects too, instead of the
	// cache's default: without this their managedFields (an entry per writer, each listing the
	// fields it set; the agent's status writes among them) were kept, 3 KiB per object.
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ManagedFields = nil
		return m, nil
	}
	m, ok := obj.(*mcfgv1.MachineConfigNode)
	if !ok {
		return obj, nil
	}
	m.ManagedFields = nil
	m.Status = mcfgv1.MachineConfigNodeStatus{PinnedImageSets: m.Status.PinnedImageSets, Conditions: pinnedimages.OwnConditions(m.Status.Conditions)}
	return m, nil
}
