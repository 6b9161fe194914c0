package rolloutcli

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// setAnnotation sets key to value on obj (remove: takes it off) with a merge patch of that one
// key, so nothing else on the object is written over.
func setAnnotation(ctx context.Context, c client.Client, obj client.Object, key, value string, remove bool) error {
	v := fmt.Sprintf("%q", value)
	if remove {
		v = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, key, v)
	return c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
