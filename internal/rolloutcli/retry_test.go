package rolloutcli

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

func TestRetryRefusal(t *testing.T) {
	node := func(state, reason string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1", Annotations: map[string]string{
			protocol.StateAnnotation: state, protocol.ReasonAnnotation: reason}}}
	}
	if err := retryRefusal(node("Degraded", "NodeBootFailed: kubelet not healthy within 10m0s after the reboot into b; reverted to a")); err != nil {
		t.Errorf("a node held back by a failed boot was refused: %v", err)
	}
	for _, n := range []*corev1.Node{
		node("Done", ""),
		node("Degraded", "applying b (rolled back): disk full"),
		node("Working", "NodeBootFailed"), // not the agent's form
		{ObjectMeta: metav1.ObjectMeta{Name: "w1"}},
	} {
		err := retryRefusal(n)
		if err == nil || !strings.Contains(err.Error(), "node/w1 is not held back by a failed boot") {
			t.Errorf("%v: err = %v, want a refusal naming the node", n.Annotations, err)
		}
	}
}
