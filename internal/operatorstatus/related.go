package operatorstatus

import configv1 "github.com/openshift/api/config/v1"

const (
	mcfgGroup     = "machineconfiguration.openshift.io"
	operatorGroup = "operator.openshift.io"
	rbacGroup     = "rbac.authorization.k8s.io"
)

// RelatedObjects is what must-gather collects for machine-config: OpenShift's operator's list,
// with mco's own namespace and RBAC objects (config/default) instead of OpenShift's, plus the
// MachineConfigNodes mco writes. OpenShift's on-premise infra namespaces are left out: their
// static pods come from OpenShift's templates, which mco does not render.
func RelatedObjects(namespace string) []configv1.ObjectReference {
	refs := []configv1.ObjectReference{
		{Resource: "namespaces", Name: namespace},
		{Group: mcfgGroup, Resource: "machineconfigpools"},
		{Group: mcfgGroup, Resource: "controllerconfigs"},
		{Group: mcfgGroup, Resource: "kubeletconfigs"},
		{Group: mcfgGroup, Resource: "containerruntimeconfigs"},
		{Group: mcfgGroup, Resource: "machineconfigs"},
		{Group: mcfgGroup, Resource: "machineconfignodes"},
		{Group: operatorGroup, Resource: "machineconfigurations"},
		// The nodes carry the config annotations the agents and the controller exchange.
		{Group: "", Resource: "nodes"},
	}
	// Cluster-scoped, so not gathered with the namespace.
	for _, resource := range []string{"clusterroles", "clusterrolebindings"} {
		for _, name := range []string{"mco-controller", "mco-daemon", "mco-server"} {
			refs = append(refs, configv1.ObjectReference{Group: rbacGroup, Resource: resource, Name: name})
		}
	}
	return refs
}
