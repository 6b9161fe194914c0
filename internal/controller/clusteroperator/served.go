package clusteroperator

import (
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/operatorstatus"
	"github.com/mco-dev/mco/internal/scheme"
)

// Served reports whether the cluster serves the ClusterOperator kind: OpenShift does (its
// cluster-version operator installs it), plain Kubernetes does not. The group alone says
// nothing, since mco installs config.openshift.io kinds of its own (Image, the mirror sets).
func Served(mapper meta.RESTMapper) (bool, error) {
	return scheme.Serves(mapper, configv1.GroupVersion.WithKind("ClusterOperator"))
}

// CacheByObject limits the ClusterOperator informer to machine-config: the controller reads
// no other, and its RBAC can then name that one object (an informer on a metadata.name field
// selector lists and watches by that name as far as RBAC is concerned).
func CacheByObject() (client.Object, cache.ByObject) {
	return &configv1.ClusterOperator{}, cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", operatorstatus.Name)}
}
