package scheme

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// ListServed lists into list, as c.List does, except where the cluster does not serve the
// list's kind: that is no error, list stays empty and served is false. The admin commands read
// mco's own kinds so (MachineConfigPoolRollouts do not exist on an install older than paced
// rollouts), and remember the answer: each list of a kind not served rediscovers every API group.
func ListServed(ctx context.Context, c client.Reader, list client.ObjectList) (served bool, err error) {
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return true, err
	}
	return true, nil
}
