package generated

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/generatedmc"
)

// EnqueueForMachineConfig: a generated MachineConfig enqueues the object of kind controlling it
// (a hand edit or deletion is undone); one writing path may be a pool's base, so it enqueues
// all; rendered configs and the rest are not the generator's input.
func EnqueueForMachineConfig(kind schema.GroupVersionKind, path string, all handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		owner, mayBeBase := generatedmc.ChangedMachineConfig(obj, kind, path)
		if owner != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: owner}}}
		}
		if mayBeBase {
			return all(ctx, obj)
		}
		return nil
	}
}

// PoolInputChanged passes a pool's update only when what a generator reads of a pool changed:
// its labels (what selectors match), its machineConfigSelector (where its base comes from) and
// its nodeSelector (whether it is a control plane pool). The render controller's new rendered
// config in spec.configuration, which bumps the generation on every render, wakes no generator.
func PoolInputChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*mcfgv1.MachineConfigPool)
		cur, okCur := e.ObjectNew.(*mcfgv1.MachineConfigPool)
		if !okOld || !okCur {
			return true
		}
		return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
			!equality.Semantic.DeepEqual(old.Spec.MachineConfigSelector, cur.Spec.MachineConfigSelector) ||
			!equality.Semantic.DeepEqual(old.Spec.NodeSelector, cur.Spec.NodeSelector)
	}}
}
