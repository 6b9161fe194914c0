package generatedmc

import (
	"encoding/json"
	"maps"
	"reflect"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Updated returns cur with what a generator sets taken from want (labels and annotations
// merged over cur's, owners and spec replaced), and whether that changes anything. spec.config
// is compared as a JSON value: the API server stores it re-encoded (keys sorted), so the bytes
// read back differ from the bytes written even when nothing changed.
func Updated(cur, want *mcfgv1.MachineConfig) (*mcfgv1.MachineConfig, bool) {
	next := cur.DeepCopy()
	next.Labels = merged(cur.Labels, want.Labels)
	next.Annotations = merged(cur.Annotations, want.Annotations)
	next.OwnerReferences = want.OwnerReferences
	next.Spec = *want.Spec.DeepCopy()
	if !equality.Semantic.DeepEqual(cur.Labels, next.Labels) || !equality.Semantic.DeepEqual(cur.Annotations, next.Annotations) ||
		!equality.Semantic.DeepEqual(cur.OwnerReferences, next.OwnerReferences) {
		return next, true
	}
	a, b := cur.Spec.DeepCopy(), next.Spec.DeepCopy()
	ca, cb := a.Config.Raw, b.Config.Raw
	a.Config.Raw, b.Config.Raw = nil, nil
	return next, !equality.Semantic.DeepEqual(a, b) || !sameJSON(ca, cb)
}

func merged(have, want map[string]string) map[string]string {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, want)
	return out
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}
