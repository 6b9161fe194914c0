package daemon

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestNodeServesTheNewestOfWatchedAndWritten plays the order in which the agent lost the drain
// controller's answer: the agent's write (version 100) comes back after the informer already
// stored the answer (101), or the informer stores the answer after the agent kept its write.
// Either way node() must serve 101, and the informer's store must never hold anything the
// informer did not put there.
func TestNodeServesTheNewestOfWatchedAndWritten(t *testing.T) {
	version := func(rv, lastApplied string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: rv,
			Annotations: map[string]string{"lastAppliedDrain": lastApplied}}}
	}
	for _, tc := range []struct {
		name  string
		steps []func(c *cluster, store cache.Store)
		want  string
	}{
		{"the answer stored before the write is kept", []func(*cluster, cache.Store){
			func(_ *cluster, s cache.Store) { _ = s.Add(version("99", "")) },
			func(_ *cluster, s cache.Store) { _ = s.Update(version("101", "uncordon")) },
			func(c *cluster, _ cache.Store) { c.remember(version("100", "")) },
		}, "101"},
		{"the answer stored after the write is kept", []func(*cluster, cache.Store){
			func(_ *cluster, s cache.Store) { _ = s.Add(version("99", "")) },
			func(c *cluster, _ cache.Store) { c.remember(version("100", "")) },
			func(_ *cluster, s cache.Store) { _ = s.Update(version("101", "uncordon")) },
		}, "101"},
		{"the write is served until the informer catches up", []func(*cluster, cache.Store){
			func(_ *cluster, s cache.Store) { _ = s.Add(version("99", "")) },
			func(c *cluster, _ cache.Store) { c.remember(version("100", "")) },
		}, "100"},
		{"an older read does not replace a newer write", []func(*cluster, cache.Store){
			func(c *cluster, _ cache.Store) { c.remember(version("100", "")) },
			func(c *cluster, _ cache.Store) { c.remember(version("98", "")) },
		}, "100"},
		{"a malformed version is never assumed newer", []func(*cluster, cache.Store){
			func(_ *cluster, s cache.Store) { _ = s.Add(version("99", "")) },
			func(c *cluster, _ cache.Store) { c.remember(version("x", "")) },
		}, "99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			c := &cluster{nodeName: "n", store: store}
			for _, step := range tc.steps {
				step(c, store)
			}
			if got := c.node(); got == nil || got.ResourceVersion != tc.want {
				t.Fatalf("node() = %v, want version %s", got, tc.want)
			}
			for _, obj := range store.List() {
				if rv := obj.(*corev1.Node).ResourceVersion; rv == "100" || rv == "98" || rv == "x" {
					t.Errorf("the informer's store holds the agent's own copy (version %s)", rv)
				}
			}
		})
	}
}
