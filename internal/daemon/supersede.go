package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
)

// A node's target can be superseded before the node is disrupted for it: the pool gets a newer
// rendered config, and the node controller moves a node whose agent has not asked for a drain
// for its target to the newer one (internal/rollout: Superseded). The agent keeps its side of
// that: it asks for the drain only while desiredConfig is still the config it planned (a JSON
// patch whose test the API server checks in the same write), and reads its Node from the API
// server once more right before its first write. If desiredConfig moved, it gives the plan up
// before anything was written and plans the newer config on the next pass, so the node is
// drained and rebooted once, for the newer config. From the first write on, the update is
// finished first (the journal never leaves a node between configs), then the newer one follows.

// requestDrain sets desiredDrain to request unless the Node's desiredConfig is no longer
// desired; superseded reports that case, in which nothing was written.
func (c *cluster) requestDrain(ctx context.Context, desired, request string) (superseded bool, err error) {
	patch, err := json.Marshal([]map[string]string{
		{"op": "test", "path": annotationPath(protocol.DesiredConfigAnnotation), "value": desired},
		{"op": "add", "path": annotationPath(protocol.DesiredDrainAnnotation), "value": request},
	})
	if err != nil {
		return false, err
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.nodeName}}
	if perr := c.client.Patch(ctx, n, client.RawPatch(types.JSONPatchType, patch)); perr != nil {
		// A failed test is one error among others (422); the Node itself says which it was.
		fresh, err := c.fetchNode(ctx)
		if err != nil {
			return false, fmt.Errorf("requesting %s on node %s: %w", request, c.nodeName, perr)
		}
		if annotation(fresh, protocol.DesiredConfigAnnotation) != desired {
			return true, nil
		}
		return false, fmt.Errorf("requesting %s on node %s: %w", request, c.nodeName, perr)
	}
	c.remember(n)
	return false, nil
}

// fetchNode reads the Node from the API server, past the informer, and caches it.
func (c *cluster) fetchNode(ctx context.Context) (*corev1.Node, error) {
	n := &corev1.Node{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: c.nodeName}, n); err != nil {
		return nil, fmt.Errorf("reading node %s: %w", c.nodeName, err)
	}
	c.remember(n)
	return n, nil
}

// annotationPath is the JSON pointer of annotation key (RFC 6901 escapes '/' as "~1").
func annotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// superseded reads the Node from the API server right before the first write of the update to
// desired and reports whether desiredConfig has moved on; then the plan is given up.
func (a *Agent) superseded(ctx context.Context, desired string) (bool, error) {
	n, err := a.kube.fetchNode(ctx)
	if err != nil {
		return false, err
	}
	if now := annotation(n, protocol.DesiredConfigAnnotation); now != desired {
		a.abandon(desired, now)
		return true, nil
	}
	return false, nil
}

// abandon gives up the plan for desired, superseded by newer before anything was written.
func (a *Agent) abandon(desired, newer string) {
	a.opts.Log.Info("the update's target was superseded before any drain or write; planning the newer one",
		"node", a.opts.NodeName, "superseded", desired, "desired", newer)
	a.kube.event(corev1.EventTypeNormal, "UpdateSuperseded", "%s was superseded by %s before the node was drained or written; moving to %s instead", desired, newer, newer)
	a.s.drainRequested = timeZero
	a.poke()
}
