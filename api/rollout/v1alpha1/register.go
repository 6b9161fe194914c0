package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is mco's own API group, distinct from OpenShift's machineconfiguration group.
const GroupName = "rollout.mco.dev"

// GroupVersion is the group and version of the types in this package.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MachineConfigPoolRollout{}, &MachineConfigPoolRolloutList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
