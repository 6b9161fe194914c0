package kubeletconfig

import (
	"bytes"
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
	if owner := metav1.GetControllerOf(obj); owner != nil {
		if owner.Kind == kubeletconfig.KubeletConfigKind.Kind && owner.APIVersion == kubeletconfig.KubeletConfigKind.GroupVersion().String() {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: owner.Name}}}
		}
		if owner.Kind == "MachineConfigPool" {
			return nil
		}
	}
	mc, ok := obj.(*mcfgv1.MachineConfig)
	if !ok || !bytes.Contains(mc.Spec.Config.Raw, []byte(kubeletconfig.KubeletConfPath)) {
		return nil
	}
	return r.all(ctx, obj)
}
