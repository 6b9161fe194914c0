package machineconfignode

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// The MachineConfigNode repeats the hold in effect and the priority as written; Reconciled
// changes only those keys, and reports a change only when one differs.
func TestMirroredAnnotations(t *testing.T) {
	h, p := rolloutv1.HoldAnnotation, rolloutv1.UpdatePriorityAnnotation
	for _, tc := range []struct {
		name    string
		node    map[string]string // the Node's annotations
		have    map[string]string // the MachineConfigNode's
		want    map[string]string
		changed bool
	}{
		{"nothing to mirror", map[string]string{"other": "x"}, nil, nil, false},
		{"a hold appears", map[string]string{h: "true"}, nil, map[string]string{h: "true"}, true},
		{"a hold and priority, already there", map[string]string{h: "true", p: "10"}, map[string]string{h: "true", p: "10"}, map[string]string{h: "true", p: "10"}, false},
		{"released", map[string]string{h: "false"}, map[string]string{h: "true", "admin": "kept"}, map[string]string{"admin": "kept"}, true},
		{"a hold that holds nothing is not mirrored", map[string]string{h: "yes"}, nil, nil, false},
		{"a priority changed", map[string]string{p: "3"}, map[string]string{p: "10"}, map[string]string{p: "3"}, true},
		{"a priority removed, others kept", nil, map[string]string{p: "10", "admin": "kept"}, map[string]string{"admin": "kept"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", UID: "uid-1", Annotations: tc.node}}
			want, err := For(node, "worker")
			if err != nil {
				t.Fatal(err)
			}
			have := want.DeepCopy()
			have.Annotations = maps.Clone(tc.have)
			before := have.DeepCopy()
			got, changed := Reconciled(have, want)
			if changed != tc.changed || !maps.Equal(got.Annotations, tc.want) {
				t.Errorf("annotations %v changed %v, want %v and %v", got.Annotations, changed, tc.want, tc.changed)
			}
			if !maps.Equal(have.Annotations, before.Annotations) {
				t.Error("Reconciled changed its argument")
			}
		})
	}
}
