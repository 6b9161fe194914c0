package annotationchange

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestPredicate(t *testing.T) {
	p := Predicate("a", "b")
	node := func(ann map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: ann}}
	}
	for _, tc := range []struct {
		name     string
		old, new map[string]string
		want     bool
	}{
		{"set", nil, map[string]string{"a": "1"}, true},
		{"changed", map[string]string{"b": "1"}, map[string]string{"b": "2"}, true},
		{"removed", map[string]string{"a": "1"}, map[string]string{}, true},
		{"another key", map[string]string{"c": "1"}, map[string]string{"c": "2"}, false},
		{"unchanged", map[string]string{"a": "1", "c": "1"}, map[string]string{"a": "1", "c": "2"}, false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: node(tc.old), ObjectNew: node(tc.new)}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if p.Create(event.CreateEvent{Object: node(map[string]string{"a": "1"})}) {
		t.Error("a creation passed")
	}
}
