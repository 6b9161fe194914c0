package node

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
)

// owned are the node fields this controller writes.
type owned struct {
	desired string
	tainted bool
}

func ownedOf(n *corev1.Node) owned {
	return owned{desired: n.Annotations[protocol.DesiredConfigAnnotation], tainted: hasUpdateTaint(n)}
}

// write is what this controller last wrote to a node and the resourceVersion the write produced.
type write struct {
	fields          owned
	resourceVersion string
}

// pendingWrites remembers, per node, the owned fields of writes the cache has not shown yet.
// Resource versions of one resource are comparable integers (KEP-5504), so a cached node older
// than the write is stale, and one at or past it has caught up (even if someone else changed
// the fields since, which then counts).
type pendingWrites struct {
	mu     sync.Mutex
	byNode map[string]write
}

func newPendingWrites() *pendingWrites { return &pendingWrites{byNode: map[string]write{}} }

func (p *pendingWrites) record(node string, o owned, resourceVersion string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byNode[node] = write{fields: o, resourceVersion: resourceVersion}
}

// overlay returns nodes as this controller last wrote them: cached nodes older than a write get
// a copy with the written fields; entries the cache has caught up with are forgotten.
func (p *pendingWrites) overlay(nodes []*corev1.Node) []*corev1.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		w, ok := p.byNode[n.Name]
		if !ok {
			continue
		}
		if cmp, err := resourceversion.CompareResourceVersion(n.ResourceVersion, w.resourceVersion); err != nil || cmp >= 0 {
			delete(p.byNode, n.Name)
			continue
		}
		out[i] = withOwned(n, w.fields)
	}
	return out
}

// forgetMissing drops entries of nodes that are not among nodes (no longer exist). It looks the
// nodes up among the few entries rather than building a set of every node's name: that set, at
// 5,000 nodes, was a sizeable part of each decision's allocations.
func (p *pendingWrites) forgetMissing(nodes []*corev1.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byNode) == 0 {
		return
	}
	seen := make(map[string]bool, len(p.byNode))
	for _, n := range nodes {
		if _, ok := p.byNode[n.Name]; ok {
			seen[n.Name] = true
		}
	}
	for name := range p.byNode {
		if !seen[name] {
			delete(p.byNode, name)
		}
	}
}

// withOwned returns a copy of n with the owned fields set to o.
func withOwned(n *corev1.Node, o owned) *corev1.Node {
	c := n.DeepCopy()
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[protocol.DesiredConfigAnnotation] = o.desired
	c.Spec.Taints = ownedTaints(c.Spec.Taints, o.tainted)
	return c
}

// ownedTaints is taints, in a new slice, with the UpdateInProgress taint if tainted and
// without it otherwise.
func ownedTaints(taints []corev1.Taint, tainted bool) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Key != protocol.UpdateInProgressTaintKey {
			out = append(out, t)
		}
	}
	if tainted {
		out = append(out, updateTaint)
	}
	return out
}

var updateTaint = corev1.Taint{Key: protocol.UpdateInProgressTaintKey, Effect: corev1.TaintEffectPreferNoSchedule}

func hasUpdateTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == protocol.UpdateInProgressTaintKey && t.Effect == corev1.TaintEffectPreferNoSchedule {
			return true
		}
	}
	return false
}

// ownedPatch is the strategic merge patch that sets n's owned fields to o: desiredConfig when
// it differs (or is missing), and the whole taint list when it changes (Node taints have no
// merge key, so a strategic merge patch replaces the list, as client.StrategicMergeFrom writes
// it too). With lock it carries n's resourceVersion, so the API server refuses it if the Node
// changed since it was read (client.MergeFromWithOptimisticLock). It is what
// client.StrategicMergeFrom(n) computes for withOwned(n, o), built from the two fields instead
// of serializing both Nodes and diffing them: that was most of the controller's CPU per node
// write in a 5,000-node rollout (bench/rollout -profile).
//
// A new desiredConfig carries rolloutv1.TargetedAnnotation, when the node was given it (now), in
// the same patch: what the pool's UpdateStalled times the update from.
func ownedPatch(n *corev1.Node, o owned, lock bool, now time.Time) ([]byte, error) {
	type taintsPatch struct {
		// No omitempty: null removes the list.
		Taints []corev1.Taint `json:"taints"`
	}
	type metaPatch struct {
		Annotations     map[string]string `json:"annotations,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
	}
	var p struct {
		Metadata *metaPatch   `json:"metadata,omitempty"`
		Spec     *taintsPatch `json:"spec,omitempty"`
	}
	meta := metaPatch{}
	if v, ok := n.Annotations[protocol.DesiredConfigAnnotation]; !ok || v != o.desired {
		meta.Annotations = map[string]string{protocol.DesiredConfigAnnotation: o.desired}
		if o.desired != "" {
			meta.Annotations[rolloutv1.TargetedAnnotation] = protocol.Targeted(o.desired, now)
		}
	}
	if lock {
		if n.ResourceVersion == "" {
			return nil, fmt.Errorf("node %s has no resourceVersion to lock the write on", n.Name)
		}
		meta.ResourceVersion = n.ResourceVersion
	}
	if meta.Annotations != nil || meta.ResourceVersion != "" {
		p.Metadata = &meta
	}
	// Serialized, an empty list is no list (omitempty), as the diff of the two Nodes saw it.
	if taints := ownedTaints(n.Spec.Taints, o.tainted); (len(n.Spec.Taints) > 0 || len(taints) > 0) && !equality.Semantic.DeepEqual(n.Spec.Taints, taints) {
		p.Spec = &taintsPatch{Taints: taints}
	}
	return json.Marshal(p)
}
