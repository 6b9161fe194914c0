package rollout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// firstCandidates picks exactly the nodes a full sort puts first, in the same order, for every
// k, with zones, missing zones and creation times that tie.
func TestFirstCandidatesIsTheSortedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var nodes []*corev1.Node
	for i := range 300 {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("n-%03d", rng.IntN(1000)*1000+i),
			CreationTimestamp: metav1.NewTime(base.Add(time.Duration(rng.IntN(20)) * time.Second)),
			Labels:            map[string]string{},
		}}
		if z := rng.IntN(4); z > 0 {
			n.Labels[ZoneLabel] = fmt.Sprintf("zone-%d", z)
		}
		nodes = append(nodes, n)
	}
	sorted := slices.Clone(nodes)
	SortCandidates(sorted)
	for _, k := range []int{0, 1, 2, 5, 36, 37, 38, 100, 299, 300} {
		got := firstCandidates(slices.Clone(nodes), k)
		if !slices.Equal(got, sorted[:k]) {
			t.Errorf("k=%d: %v, want %v", k, names(got), names(sorted[:k]))
		}
	}
}
