package e2e

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/mco-dev/mco/internal/rollout"
)

// unavailabilityWatcher watches Nodes on its own connection, independent of every controller,
// and records the most nodes that were ever unavailable at the same moment.
type unavailabilityWatcher struct {
	mu    sync.Mutex
	nodes map[string]*corev1.Node
	max   int
	worst []string
	// wentNotReady holds every node seen with Ready=False since the last reset.
	wentNotReady map[string]bool
}

func watchUnavailable(t *testing.T, ctx context.Context, cfg *rest.Config, selector string) *unavailabilityWatcher {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	uw := &unavailabilityWatcher{nodes: map[string]*corev1.Node{}, wentNotReady: map[string]bool{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			uw.observe(ev.Type, n)
		}
	}()
	return uw
}

func (uw *unavailabilityWatcher) observe(kind watch.EventType, n *corev1.Node) {
	uw.mu.Lock()
	defer uw.mu.Unlock()
	if kind == watch.Deleted {
		delete(uw.nodes, n.Name)
		return
	}
	uw.nodes[n.Name] = n
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			uw.wentNotReady[n.Name] = true
		}
	}
	var unavailable []string
	for name, node := range uw.nodes {
		if rollout.Managed(node) && rollout.Unavailable(node) {
			unavailable = append(unavailable, name)
		}
	}
	if len(unavailable) > uw.max {
		uw.max, uw.worst = len(unavailable), unavailable
	}
}

// reset forgets the maximum, keeping the nodes' current state.
func (uw *unavailabilityWatcher) reset() {
	uw.mu.Lock()
	defer uw.mu.Unlock()
	uw.max, uw.worst = 0, nil
	clear(uw.wentNotReady)
}

// notReadySeen reports whether node was seen NotReady since the last reset.
func (uw *unavailabilityWatcher) notReadySeen(node string) bool {
	uw.mu.Lock()
	defer uw.mu.Unlock()
	return uw.wentNotReady[node]
}

func (uw *unavailabilityWatcher) maxUnavailable() (int, []string) {
	uw.mu.Lock()
	defer uw.mu.Unlock()
	return uw.max, uw.worst
}
