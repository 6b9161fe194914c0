package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/mco-dev/mco/internal/protocol"
)

// nodeChanges sorts the Node updates the API server sends by the controllers' fields each one
// changed (desiredConfig, the UpdateInProgress taint, cordon, the drain annotations): a Node
// write of the controller shows which of its fields it carried, and a patch the API server
// counted without any update event changed nothing.
type nodeChanges struct {
	mu     sync.Mutex
	counts writeKinds
}

// controllerFields are the Node fields only mco's controllers write, by the name printed.
var controllerFields = map[string]func(*corev1.Node) string{
	"desiredConfig":    annotation(protocol.DesiredConfigAnnotation),
	"taint":            func(n *corev1.Node) string { return strings.Repeat("x", countUpdateTaints(n)) },
	"cordon":           func(n *corev1.Node) string { return map[bool]string{true: "x"}[n.Spec.Unschedulable] },
	"lastAppliedDrain": annotation(protocol.LastAppliedDrainAnnotation),
	"drain-started-at": annotation(protocol.DrainStartedAtAnnotation),
	"drain-blocked":    annotation(protocol.DrainBlockedAnnotation),
	"adoption-target":  annotation(protocol.AdoptionTargetAnnotation),
}

func annotation(key string) func(*corev1.Node) string {
	return func(n *corev1.Node) string { return n.Annotations[key] }
}

func countUpdateTaints(n *corev1.Node) int {
	c := 0
	for _, t := range n.Spec.Taints {
		if t.Key == protocol.UpdateInProgressTaintKey {
			c++
		}
	}
	return c
}

func (c *nodeChanges) watch(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(o, n any) {
		c.observe(o.(*corev1.Node), n.(*corev1.Node))
	}})
	return err
}

func (c *nodeChanges) observe(old, n *corev1.Node) {
	var changed []string
	for name, get := range controllerFields {
		if get(old) != get(n) {
			changed = append(changed, name)
		}
	}
	if len(changed) == 0 {
		return
	}
	slices.Sort(changed)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts["nodes "+strings.Join(changed, "+")]++
}

func (c *nodeChanges) snapshot() writeKinds {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}
