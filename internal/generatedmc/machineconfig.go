package generatedmc

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/protocol"
)

// MachineConfig is a generated MachineConfig as OpenShift writes one: the role label of the
// pool it is for, the generating controller's version as its only annotation, its owners.
func MachineConfig(pool, name string, rawIgnition []byte, owners []metav1.OwnerReference, controllerVersion string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Labels:          map[string]string{protocol.RoleLabel: pool},
			Annotations:     map[string]string{protocol.GeneratedByControllerVersionAnnotation: controllerVersion},
			OwnerReferences: owners,
		},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: rawIgnition}},
	}
}
