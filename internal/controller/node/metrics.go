package node

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The pool gauges OpenShift's dashboards and alerts read, labelled by pool.
var (
	machineCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_machine_count", Help: "Nodes managed by the pool.",
	}, []string{"pool"})
	updatedMachineCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_updated_machine_count", Help: "Nodes of the pool running its target config.",
	}, []string{"pool"})
	degradedMachineCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_degraded_machine_count", Help: "Nodes of the pool whose agent reports Degraded or Unreconcilable.",
	}, []string{"pool"})
	unavailableMachineCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_unavailable_machine_count", Help: "Nodes of the pool that are not Ready, cordoned, updating or failing.",
	}, []string{"pool"})
	unresponsiveMachineCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_unresponsive_machine_count", Help: "Nodes of the pool NotReady mid-update past the threshold; while above 0 the pool starts no node.",
	}, []string{"pool"})
	awaitingAdoptionCount = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_awaiting_adoption_machine_count", Help: "Nodes mco did not boot waiting for adoption into the pool's target (approved or not); not in mco_machine_count.",
	}, []string{"pool"})
	poolHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mco_pool_held", Help: "1 while the pool starts no node on purpose: paused, held by its MachineConfigPoolRollout (canary, soak, window, gate, refusal), or waiting only for nodes an admin holds (mco hold).",
	}, []string{"pool"})
)

func init() { metrics.Registry.MustRegister(Collectors()...) }

// Collectors are the series this package exports on the controller's metrics endpoint, so a
// test can list them (docs/metrics.md, config/prometheus) without starting the controller.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{machineCount, updatedMachineCount, degradedMachineCount, unavailableMachineCount, unresponsiveMachineCount, awaitingAdoptionCount, poolHeld}
}

func recordPoolMetrics(pool string, st mcfgv1.MachineConfigPoolStatus, unresponsive, awaitingAdoption int, held bool) {
	unresponsiveMachineCount.WithLabelValues(pool).Set(float64(unresponsive))
	awaitingAdoptionCount.WithLabelValues(pool).Set(float64(awaitingAdoption))
	poolHeld.WithLabelValues(pool).Set(map[bool]float64{true: 1}[held])
	machineCount.WithLabelValues(pool).Set(float64(st.MachineCount))
	updatedMachineCount.WithLabelValues(pool).Set(float64(st.UpdatedMachineCount))
	degradedMachineCount.WithLabelValues(pool).Set(float64(st.DegradedMachineCount))
	unavailableMachineCount.WithLabelValues(pool).Set(float64(st.UnavailableMachineCount))
}

func forgetPoolMetrics(pool string) {
	for _, g := range []*prometheus.GaugeVec{machineCount, updatedMachineCount, degradedMachineCount, unavailableMachineCount, unresponsiveMachineCount, awaitingAdoptionCount, poolHeld} {
		g.DeleteLabelValues(pool)
	}
}
