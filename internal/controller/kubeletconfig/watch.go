package kubeletconfig

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/kubeletconfig"
)

// all enqueues every KubeletConfig: pools and the APIServer can change any of them, and a
// cluster has a handful.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	var kcs mcfgv1.KubeletConfigList
	if err := r.Client.List(ctx, &kcs); err != nil {
		log.FromContext(ctx).Error(err, "listing KubeletConfigs")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(kcs.Items))
	for _, kc := range kcs.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: kc.Name}})
	}
	return reqs
}

// forMachineConfig: a generated MachineConfig enqueues its KubeletConfig (a hand edit or
// deletion is undone); one that writes the kubelet's configuration may be a pool's base, so
// it enqueues them all; rendered configs and the rest are not our input.
func (r *Reconciler) forMachineConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	owner, mayBeBase := generatedmc.ChangedMachineConfig(obj, kubeletconfig.KubeletConfigKind, kubeletconfig.KubeletConfPath)
	if owner != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: owner}}}
	}
	if mayBeBase {
		return r.all(ctx, obj)
	}
	return nil
}
