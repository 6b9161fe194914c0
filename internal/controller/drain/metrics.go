package drain

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// drainErr is OpenShift's mcc_drain_err: 1 for a node whose drain is blocked past the threshold;
// the series is removed when the drain is acknowledged.
var drainErr = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "mcc_drain_err",
	Help: "1 while the node's drain has been blocked longer than the drain controller's threshold.",
}, []string{"node"})

// blockedByBudget tells a PodDisruptionBudget refusing evictions apart from pods slow to
// terminate: only the first needs someone to act, so an alert can wait less for it than for
// mcc_drain_err. Removed with the drain's acknowledgement, like drainErr.
var blockedByBudget = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "mcc_drain_blocked_by_pdb",
	Help: "1 while the last eviction pass of the node's drain was refused by a PodDisruptionBudget, 0 while only terminating pods remain.",
}, []string{"node"})

// drainSeconds is how long drains take, from the cordon to the acknowledgement: the part of a
// rollout the workloads decide.
var drainSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "mcc_drain_duration_seconds",
	Help:    "Time from cordoning a node for a drain to acknowledging the drain once no evictable pod is left.",
	Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200},
})

func init() { metrics.Registry.MustRegister(Collectors()...) }

// Collectors are the series this package exports on the controller's metrics endpoint, so a
// test can list them (docs/metrics.md, config/prometheus) without starting the controller.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{drainErr, blockedByBudget, drainSeconds}
}

func forgetNodeMetrics(node string) {
	drainErr.DeleteLabelValues(node)
	blockedByBudget.DeleteLabelValues(node)
}

func recordObstacles(node string, obstacles []Obstacle) {
	budget := 0.0
	for _, o := range obstacles {
		if len(o.Budgets) > 0 {
			budget = 1
		}
	}
	blockedByBudget.WithLabelValues(node).Set(budget)
}
