package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/controller/statuspatch"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// parallelNodeWrites bounds concurrent node patches: a new target taints every node of a pool
// at once, and a thousand sequential round trips would dominate the rollout time.
const parallelNodeWrites = 16

// writeNodes patches each member whose desiredConfig or UpdateInProgress taint differs from the
// decision. Strategic merge patches touch only those fields, so they never conflict with the
// agent writing its own annotations on the same node.
func (r *Reconciler) writeNodes(ctx context.Context, pool *mcfgv1.MachineConfigPool, members, unmanaged []*corev1.Node, d rollout.Decision) error {
	next := make(map[string]bool, len(d.Next))
	for _, name := range d.Next {
		next[name] = true
	}
	locked := make(map[string]bool, len(d.Superseded)+len(d.Adopted))
	for _, name := range append(slices.Clip(d.Superseded), d.Adopted...) {
		locked[name] = true
	}
	todo, wants := nodeWrites(members, unmanaged, d, r.drainForecast(ctx, pool, d.Target))
	now := time.Now()

	var mu sync.Mutex
	var errs []error
	var targeted, adopted []string
	sem := make(chan struct{}, parallelNodeWrites)
	var wg sync.WaitGroup
	for i, n := range todo {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// Moved off a superseded target only if its agent has not asked for the drain since
			// the node was read (rollout.Superseded); adopted only if the approval and the
			// agent's plan are still what the decision read.
			data, err := ownedPatch(n, wants[i], locked[n.Name], now)
			patched := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}} // what the API server returns
			if err == nil {
				err = r.Client.Patch(ctx, patched, client.RawPatch(types.StrategicMergePatchType, data))
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsNotFound(err): // deleted meanwhile; its delete event requeues the pool
			case apierrors.IsConflict(err) && slices.Contains(d.Adopted, n.Name):
				errs = append(errs, fmt.Errorf("node %s changed since it was read, so its adoption waits; deciding again: %w", n.Name, err))
			case apierrors.IsConflict(err):
				errs = append(errs, fmt.Errorf("node %s changed since it was read, so its superseded target %s was kept; deciding again: %w",
					n.Name, n.Annotations[protocol.DesiredConfigAnnotation], err))
			case err != nil:
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			case next[n.Name]:
				targeted = append(targeted, n.Name)
				if slices.Contains(d.Adopted, n.Name) {
					adopted = append(adopted, n.Name)
				}
			}
			if err == nil {
				r.pending.record(n.Name, wants[i], patched.ResourceVersion)
			}
		}()
	}
	wg.Wait()
	r.reportAdoptions(pool, unmanaged, d, adopted)
	if len(targeted) > 0 {
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonSetDesiredConfig, "Targeted %s to MachineConfig %s", nodeList(targeted), d.Target)
	}
	return errors.Join(errs...)
}

// nodeWrites lists the members (and the adopted unmanaged nodes) whose desiredConfig or
// UpdateInProgress taint the decision changes, with the fields to write. The nodes to target
// come first, in the order the decision chose them: a new target also taints every node left
// waiting, and the first batch should not start only after hundreds of taint writes. mayDrain
// says whether moving a node to the target may drain it (drainForecast).
func nodeWrites(members, unmanaged []*corev1.Node, d rollout.Decision, mayDrain func(*corev1.Node) bool) (todo []*corev1.Node, wants []owned) {
	byName := make(map[string]*corev1.Node, len(members))
	for _, n := range members {
		byName[n.Name] = n
	}
	for _, n := range unmanaged {
		if slices.Contains(d.Adopted, n.Name) {
			byName[n.Name] = n
		}
	}
	add := func(n *corev1.Node, want owned) {
		want.tainted = rollout.WantsTaint(want.desired, d.Target) && mayDrain(n)
		if want != ownedOf(n) {
			todo, wants = append(todo, n), append(wants, want)
		}
	}
	next := make(map[string]bool, len(d.Next))
	for _, name := range d.Next {
		if n, ok := byName[name]; ok && !next[name] {
			next[name] = true
			add(n, owned{desired: d.Target})
		}
	}
	for _, n := range members {
		if !next[n.Name] {
			add(n, ownedOf(n))
		}
	}
	return todo, wants
}

// nodeList names the nodes a batch targeted; one event per batch instead of one per node keeps
// events from doubling the writes of a large rollout.
func nodeList(names []string) string {
	const shown = 10
	if len(names) == 1 {
		return "node " + names[0]
	}
	s := fmt.Sprintf("%d nodes: %s", len(names), strings.Join(names[:min(len(names), shown)], ", "))
	if len(names) > shown {
		s += ", ..."
	}
	return s
}

// writeStatus patches the pool's status if the decision changed it, or says how long to wait
// when only counts changed and the last write was recent (statusWrite). The optimistic lock
// makes a concurrent RenderDegraded write by the render controller a conflict (and a requeue)
// instead of a lost condition.
func (r *Reconciler) writeStatus(ctx context.Context, pool *mcfgv1.MachineConfigPool, d rollout.Decision, began time.Time) (wait time.Duration, err error) {
	now, wait := statusWrite(&pool.Status, &d.Status, r.statusWrites.since(pool.Name))
	if !now {
		return wait, nil
	}
	before := pool.DeepCopy()
	pool.Status = d.Status
	if err := r.Client.Status().Patch(ctx, pool, statuspatch.MergeFrom(before)); err != nil {
		return 0, fmt.Errorf("pool %s status: %w", pool.Name, err)
	}
	r.statusWrites.wrote(pool.Name, began)
	if d.Completed {
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonCompleted, "All %d nodes are updated with MachineConfig %s", d.Status.MachineCount, d.Target)
	}
	return 0, nil
}
