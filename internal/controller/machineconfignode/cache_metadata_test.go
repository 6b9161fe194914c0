package machineconfignode

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cached metadata of a MachineConfigNode keeps no managedFields: the kind's transform is
// used for it, not the cache's default.
func TestCacheStripsMetadataManagedFields(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Generation: 4,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "machine-config-daemon"}}}}
	_, by := CacheByObject()
	got, err := by.Transform(m)
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := got.(*metav1.PartialObjectMetadata)
	if !ok || kept.ManagedFields != nil || kept.Name != "worker-0" || kept.Generation != 4 {
		t.Errorf("cached %+v", got)
	}
}
