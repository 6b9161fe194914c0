package generatedmc

import (
	"bytes"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ChangedMachineConfig says whom a change to mc concerns, for a generator whose objects are of
// kind and whose bases are files at path: owner, the object of kind controlling mc (its
// generated MachineConfig was edited or deleted, to be put back); else mayBeBase, whether mc
// writes path and so may be a pool's base for every object. A rendered MachineConfig (a pool
// controls it) concerns nobody.
func ChangedMachineConfig(mc metav1.Object, kind schema.GroupVersionKind, path string) (owner string, mayBeBase bool) {
	if ref := metav1.GetControllerOf(mc); ref != nil {
		if ref.Kind == kind.Kind && ref.APIVersion == kind.GroupVersion().String() {
			return ref.Name, false
		}
		if ref.Kind == "MachineConfigPool" {
			return "", false
		}
	}
	m, ok := mc.(*mcfgv1.MachineConfig)
	return "", ok && bytes.Contains(m.Spec.Config.Raw, []byte(path))
}
