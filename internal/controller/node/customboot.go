package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Event reasons of the first-boot labelling, on the Node.
const (
	ReasonCustomPoolLabelsApplied = "CustomPoolLabelsApplied"
	ReasonCustomPoolLabelsRefused = "CustomPoolLabelsRefused"
)

// settleCustomBoots gives each node that first booted into a custom pool that pool's
// node-selector labels and the customPoolLabelsApplied annotation (rollout.DecideCustomBoot),
// before any pool decides anything, so the node is counted and targeted by its own pool from
// the moment its agent reports: never by worker, whose role label the kubelet gave it. nodes is
// updated in place with the written nodes. held are the nodes whose labels were refused, or not
// written this round (a write conflicted with a newer node or failed): no pool may count or
// target them.
func (r *Reconciler) settleCustomBoots(ctx context.Context, pools []*mcfgv1.MachineConfigPool, nodes []*corev1.Node) (map[string]bool, error) {
	held := map[string]bool{}
	var errs []error
	for i, n := range nodes {
		rendered, pending := rollout.FirstBootPending(n)
		if !pending {
			continue
		}
		d := rollout.DecideCustomBoot(n, r.bootedPool(ctx, rendered), pools)
		switch {
		case d.Pool == "":
			continue
		case d.Refused != "":
			held[n.Name] = true
			r.warnOnce(n, "customboot/"+n.Name, ReasonCustomPoolLabelsRefused,
				d.Refused+"; the node is left out of every pool until it is labelled or annotated "+protocol.CustomPoolLabelsAppliedAnnotation)
			continue
		}
		written, err := r.applyCustomPoolLabels(ctx, n, d)
		switch {
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			// Changed or deleted since the cache saw it (perhaps by this very write from a
			// concurrent reconcile): its event brings the node back with what it is now.
			held[n.Name] = true
		case err != nil:
			held[n.Name] = true
			errs = append(errs, fmt.Errorf("labelling node %s for pool %s: %w", n.Name, d.Pool, err))
		default:
			nodes[i] = written
			r.forgetWarning("customboot/" + n.Name)
		}
	}
	return held, errors.Join(errs...)
}

// applyCustomPoolLabels writes the labels and the annotation in one patch, conditional on the
// node being what the decision was made from (a label changed meanwhile could make it wrong).
func (r *Reconciler) applyCustomPoolLabels(ctx context.Context, n *corev1.Node, d rollout.CustomBoot) (*corev1.Node, error) {
	written := n.DeepCopy()
	if written.Labels == nil {
		written.Labels = map[string]string{}
	}
	if written.Annotations == nil {
		written.Annotations = map[string]string{}
	}
	maps.Copy(written.Labels, d.Labels)
	written.Annotations[protocol.CustomPoolLabelsAppliedAnnotation] = ""
	if err := r.Client.Patch(ctx, written, client.MergeFromWithOptions(n, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, err
	}
	message := fmt.Sprintf("Booted into pool %s: it already has the pool's labels", d.Pool)
	if len(d.Labels) > 0 {
		message = fmt.Sprintf("Booted into pool %s: labelled %s", d.Pool, labelList(d.Labels))
	}
	r.Recorder.Event(written, corev1.EventTypeNormal, ReasonCustomPoolLabelsApplied, message)
	return written, nil
}

func labelList(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ", ")
}

// bootedPool is the pool owning a rendered config (rollout.OwningPool), "" when the config is
// not in the cache (not yet, or garbage collected: such a node follows its labels) or has no
// pool owner. Owners are remembered: a rendered config's name is its content's hash, so its
// owner never changes, and every reconcile asks for every node's first config.
func (r *Reconciler) bootedPool(ctx context.Context, rendered string) string {
	if pool, ok := r.owners.get(rendered); ok {
		return pool
	}
	var mc mcfgv1.MachineConfig
	if err := r.Client.Get(ctx, client.ObjectKey{Name: rendered}, &mc); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "reading a node's first rendered config", "config", rendered)
		}
		return ""
	}
	pool := rollout.OwningPool(&mc)
	r.owners.put(rendered, pool)
	return pool
}

// ownerMemo remembers rendered config → owning pool, up to maxOwners entries (then it starts
// over: forgetting costs one cached read per config).
type ownerMemo struct {
	mu     sync.Mutex
	byName map[string]string
}

const maxOwners = 4096

func (m *ownerMemo) get(rendered string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pool, ok := m.byName[rendered]
	return pool, ok
}

func (m *ownerMemo) put(rendered, pool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName == nil || len(m.byName) >= maxOwners {
		m.byName = map[string]string{}
	}
	m.byName[rendered] = pool
}
