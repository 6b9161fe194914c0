package rollout

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// BenchmarkDecide: one decision in the middle of a 5,000-node rollout with maxUnavailable 10%:
// 2,000 nodes updated, 500 updating (half of them reported Done since the last decision, freeing
// their slots), 2,500 waiting.
func BenchmarkDecide(b *testing.B) {
	p := pool("worker", "v2", maxUnavail(intstr.FromString("10%")))
	nodes := make([]*corev1.Node, 5000)
	for i := range nodes {
		cfg := "v1"
		if i < 2500 {
			cfg = "v2"
		}
		n := node(fmt.Sprintf("worker-%04d", i), cfg, created(int64(i%97)), zone(fmt.Sprintf("zone-%d", i%3)))
		if i >= 2000 && i < 2250 {
			n.Annotations[protocol.CurrentConfigAnnotation] = "v1"
			n.Annotations[protocol.StateAnnotation] = string(protocol.NodeWorking)
		}
		nodes[i] = n
	}
	now := metav1.NewTime(time.Unix(2000, 0))
	for b.Loop() {
		Decide(Input{Pool: p, Nodes: nodes, Now: now})
	}
}
