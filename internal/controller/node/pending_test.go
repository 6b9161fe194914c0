package node

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// ownedPatch writes what a strategic merge patch computed from the Node before and after
// withOwned writes: the same fields, the same list replaced or removed, the same lock.
func TestOwnedPatchIsTheComputedOne(t *testing.T) {
	other := corev1.Taint{Key: "example.com/other", Value: "x", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: metav1.Now().Rfc3339Copy().Time}}
	node := func(annotations map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "42", Annotations: annotations,
			Labels: map[string]string{"l": "v"}}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	d := protocol.DesiredConfigAnnotation
	now := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		n    *corev1.Node
		o    owned
	}{
		{"new target", node(map[string]string{d: "v1", "x": "y"}), owned{desired: "v2"}},
		{"new target, tainted", node(map[string]string{d: "v1"}), owned{desired: "v2", tainted: true}},
		{"taint beside another", node(map[string]string{d: "v1"}, other), owned{desired: "v1", tainted: true}},
		{"untaint, another kept", node(map[string]string{d: "v1"}, other, updateTaint), owned{desired: "v2"}},
		{"untaint, the only one", node(map[string]string{d: "v1"}, updateTaint), owned{desired: "v1"}},
		{"retaint with another effect", node(map[string]string{d: "v1"}, corev1.Taint{Key: protocol.UpdateInProgressTaintKey, Effect: corev1.TaintEffectNoSchedule}), owned{desired: "v1", tainted: true}},
		{"no annotations at all", node(nil), owned{desired: "v2"}},
		{"an empty desiredConfig where there was none", node(map[string]string{"x": "y"}, updateTaint), owned{}},
		{"empty taint list", node(map[string]string{d: "v1"}, []corev1.Taint{}...), owned{desired: "v2"}},
	}
	for _, tc := range cases {
		for _, lock := range []bool{false, true} {
			var opts []client.MergeFromOption
			if lock {
				opts = append(opts, client.MergeFromWithOptimisticLock{})
			}
			after := withOwned(tc.n, tc.o)
			if tc.o.desired != "" && tc.n.Annotations[d] != tc.o.desired {
				after.Annotations[rolloutv1.TargetedAnnotation] = protocol.Targeted(tc.o.desired, now)
			}
			want, err := client.StrategicMergeFrom(tc.n, opts...).Data(after)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ownedPatch(tc.n, tc.o, lock, now)
			if err != nil {
				t.Fatalf("%s (lock %v): %v", tc.name, lock, err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s (lock %v): patch %s, want %s", tc.name, lock, got, want)
			}
		}
	}
	unversioned := node(map[string]string{d: "v1"})
	unversioned.ResourceVersion = ""
	if _, err := ownedPatch(unversioned, owned{desired: "v2"}, true, now); err == nil {
		t.Error("a locked patch of a Node without resourceVersion was built")
	}
}
