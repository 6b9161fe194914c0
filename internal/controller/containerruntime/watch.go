package containerruntime

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/containerruntime"
	"github.com/mco-dev/mco/internal/generatedmc"
)

// all enqueues every ContainerRuntimeConfig: a pool change can affect any of them, and a
// cluster has a handful.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	var cfgs mcfgv1.ContainerRuntimeConfigList
	if err := r.Client.List(ctx, &cfgs); err != nil {
		log.FromContext(ctx).Error(err, "listing ContainerRuntimeConfigs")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(cfgs.Items))
	for _, c := range cfgs.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return reqs
}

// forMachineConfig: a generated MachineConfig enqueues its ContainerRuntimeConfig (a hand edit
// or deletion is undone); one writing storage.conf may be a pool's base, so it enqueues them
// all; rendered configs and the rest are not our input.
func (r *Reconciler) forMachineConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	owner, mayBeBase := generatedmc.ChangedMachineConfig(obj, containerruntime.Kind, containerruntime.StorageConfPath)
	if owner != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: owner}}}
	}
	if mayBeBase {
		return r.all(ctx, obj)
	}
	return nil
}
