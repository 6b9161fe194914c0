package scheme

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Serves asks the REST mapper whether the cluster serves gvk's kind. Several of mco's inputs
// exist only on some clusters (MachineSets with the Machine API; ClusterOperator, ClusterVersion
// and APIServer on OpenShift), and a controller must neither watch nor cache a kind the cluster
// lacks. Only "no such kind" is false; any other error (the API server unreachable) is returned.
func Serves(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}
