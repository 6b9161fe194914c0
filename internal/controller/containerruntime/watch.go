package containerruntime

import (
	"bytes"
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/containerruntime"
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
	if owner := metav1.GetControllerOf(obj); owner != nil {
		if owner.Kind == containerruntime.Kind.Kind && owner.APIVersion == containerruntime.Kind.GroupVersion().String() {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: owner.Name}}}
		}
		if owner.Kind == "MachineConfigPool" {
			return nil
		}
	}
	mc, ok := obj.(*mcfgv1.MachineConfig)
	if !ok || !bytes.Contains(mc.Spec.Config.Raw, []byte(containerruntime.StorageConfPath)) {
		return nil
	}
	return r.all(ctx, obj)
}
