package bootimage

import (
	"context"
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/mco-dev/mco/internal/bootimage"
)

// degradedGauge backs the PrometheusRule in config/prometheus: the conditions live on an
// OpenShift CRD kube-state-metrics does not export by default, so the controller exports the
// one bit an alert needs.
var degradedGauge = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "mco_boot_image_update_degraded",
	Help: "1 when MachineConfiguration cluster reports BootImageUpdateDegraded=True, else 0.",
})

func init() { metrics.Registry.MustRegister(Collectors()...) }

// Collectors are the series this package exports on the controller's metrics endpoint, so a
// test can list them (docs/metrics.md, config/prometheus) without starting the controller.
func Collectors() []prometheus.Collector { return []prometheus.Collector{degradedGauge} }

// writeStatus sets both conditions and the effective boot image configuration on
// MachineConfiguration `cluster`, writing only when something changed. The optimistic lock
// keeps conditions other controllers set on the same object: the merge patch replaces the
// whole list, so it must be based on the latest one.
func (r *Reconciler) writeStatus(ctx context.Context, mc *operatorv1.MachineConfiguration, pass bootimage.Pass) error {
	if pass.Degraded() {
		degradedGauge.Set(1)
	} else {
		degradedGauge.Set(0)
	}
	updated := mc.DeepCopy()
	for _, c := range bootimage.Conditions(pass, mc.Generation) {
		meta.SetStatusCondition(&updated.Status.Conditions, c)
	}
	updated.Status.ManagedBootImagesStatus.MachineManagers = bootimage.EffectiveMachineManagers(mc.Spec.ManagedBootImages)
	if equality.Semantic.DeepEqual(mc.Status, updated.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, updated, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing MachineConfiguration %s status: %w", mc.Name, err)
	}
	return nil
}
