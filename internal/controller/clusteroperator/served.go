package clusteroperator

import (
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/operatorstatus"
)

// Served reports whether the cluster serves the ClusterOperator kind: OpenShift does (its
// cluster-version operator installs it), plain Kubernetes does not. The group alone says
// nothing, since mco installs config.openshift.io kinds of its own (Image, the mirror sets).
func Served(mapper meta.RESTMapper) (bool, error) {
	gk := schema.GroupKind{Group: configv1.GroupName, Kind: "ClusterOperator"}
	_, err := mapper.RESTMapping(gk, configv1.GroupVersion.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// CacheByObject limits the ClusterOperator informer to machine-config: the controller reads
// no other, and its RBAC can then name that one object (an informer on a metadata.name field
// selector lists and watches by that name as far as RBAC is concerned).
func CacheByObject() (client.Object, cache.ByObject) {
	return &configv1.ClusterOperator{}, cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", operatorstatus.Name)}
}
