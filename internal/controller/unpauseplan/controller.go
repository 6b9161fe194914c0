package unpauseplan

import (
	"context"
	"fmt"
	"slices"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/controller/statuspatch"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/rollout"
)

// conflictRetry is how long after losing a status write to another controller to try again.
const conflictRetry = time.Second

// Reasons of the False condition.
const (
	ReasonNotPaused      = "NotPaused"
	ReasonNothingPending = "NothingPending"
)

// Reconciler keeps one pool's PendingUpdate condition.
type Reconciler struct {
	Client client.Client

	plans changeplan.Cache
}

// Reconcile plans the paused pool's pending update and writes the condition if it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	had := poolcondition.Get(&pool.Status, poolcondition.PendingUpdate) != nil
	target := pool.Spec.Configuration.Name
	if !pool.Spec.Paused || target == "" {
		if !had {
			// A pool that was never paused gets no condition and no write.
			return reconcile.Result{}, nil
		}
		return r.write(ctx, pool, corev1.ConditionFalse, ReasonNotPaused, "")
	}
	behind, err := r.nodesBehind(ctx, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(behind) == 0 {
		if !had {
			return reconcile.Result{}, nil
		}
		return r.write(ctx, pool, corev1.ConditionFalse, ReasonNothingPending, fmt.Sprintf("every node runs %s", target))
	}
	groups, err := r.plan(ctx, pool, behind)
	if err != nil {
		return reconcile.Result{}, err
	}
	v := changeplan.Unpausing(groups)
	return r.write(ctx, pool, corev1.ConditionTrue, v.Reason, v.Message)
}

// nodesBehind counts the pool's members per current config other than the target, grouped as
// mco plan groups them. A node that has not reported a config yet is left out: it is not on an
// older one.
func (r *Reconciler) nodesBehind(ctx context.Context, pool *mcfgv1.MachineConfigPool) (map[string]int, error) {
	var poolList mcfgv1.MachineConfigPoolList
	var nodeList corev1.NodeList
	if err := r.Client.List(ctx, &poolList); err != nil {
		return nil, err
	}
	if err := r.Client.List(ctx, &nodeList); err != nil {
		return nil, err
	}
	pools := make([]*mcfgv1.MachineConfigPool, len(poolList.Items))
	for i := range poolList.Items {
		pools[i] = &poolList.Items[i]
	}
	nodes := make([]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	members, _ := rollout.Members(pool, pools, nodes)
	behind := map[string]int{}
	for _, g := range changeplan.GroupNodes(members) {
		if g.Current != "" && g.Current != pool.Spec.Configuration.Name {
			behind[g.Current] = len(g.Nodes)
		}
	}
	return behind, nil
}

// plan plans each group's move to the target. A rendered config that does not exist (deleted,
// or not yet in the cache: its create event requeues the pool) or does not parse is that
// group's error in the message, not a failed reconcile; a failed read is.
func (r *Reconciler) plan(ctx context.Context, pool *mcfgv1.MachineConfigPool, behind map[string]int) ([]changeplan.Group, error) {
	policies, err := changeplan.ClusterPolicies(ctx, r.Client)
	if err != nil {
		return nil, err
	}
	target, targetErr := r.rendered(ctx, pool.Spec.Configuration.Name)
	if targetErr != nil && !apierrors.IsNotFound(targetErr) {
		return nil, targetErr
	}
	currents := make([]string, 0, len(behind))
	for name := range behind {
		currents = append(currents, name)
	}
	slices.Sort(currents)
	groups := make([]changeplan.Group, 0, len(currents))
	for _, name := range currents {
		g := changeplan.Group{Current: name, Nodes: behind[name]}
		current, err := r.rendered(ctx, name)
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			return nil, err
		case err != nil:
			g.Err = fmt.Sprintf("rendered config %s not found", name)
		case targetErr != nil:
			g.Err = fmt.Sprintf("target rendered config %s not found", pool.Spec.Configuration.Name)
		default:
			g.Plan, err = r.plans.Between(pool.Name, current, target, policies)
			if err != nil {
				g.Err = err.Error()
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

func (r *Reconciler) rendered(ctx context.Context, name string) (*mcfgv1.MachineConfig, error) {
	mc := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return nil, err
	}
	return mc, nil
}

// write sets the condition and patches the status only if that changed it. The optimistic lock
// turns a concurrent write by the node or render controller into a conflict and a retry, never
// a lost condition of theirs.
func (r *Reconciler) write(ctx context.Context, pool *mcfgv1.MachineConfigPool, status corev1.ConditionStatus, reason, message string) (reconcile.Result, error) {
	before := pool.DeepCopy()
	if !poolcondition.Set(&pool.Status, poolcondition.PendingUpdate, status, reason, message, metav1.Now()) {
		return reconcile.Result{}, nil
	}
	err := r.Client.Status().Patch(ctx, pool, statuspatch.MergeFrom(before))
	switch {
	case apierrors.IsConflict(err):
		// Pool status events do not requeue this controller (see SetupWithManager): look again
		// once the cache has caught up with the write that won.
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("pool %s status: %w", pool.Name, err)
	}
	return reconcile.Result{}, nil
}
