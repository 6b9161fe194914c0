package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mco-dev/mco/internal/protocol"
)

// metrics are the agent's Prometheus series (OpenShift's names where they exist).
type metrics struct {
	state         *prometheus.GaugeVec
	drift         prometheus.Gauge
	rebootsFailed prometheus.Counter
	reboots       prometheus.Counter
	bootTime      prometheus.Gauge
	applySeconds  prometheus.Histogram
	// pivotErrors counts OS changes that failed: the backend could not stage them, or after
	// the reboot the booted system is not what the config asks for.
	pivotErrors prometheus.Counter
	// kubeletState is the number of consecutive failed kubelet health checks (0: healthy).
	kubeletState prometheus.Gauge
	// The drift monitor's watches: how drift is found, not whether there is any.
	driftWatchDegraded prometheus.Gauge
	driftWatchErrors   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcd_state",
			Help: "1 for the node agent's current state, 0 for the others"}, []string{"state", "reason"}),
		drift: prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcd_config_drift",
			Help: "Unix time the agent last found the disk differing from the current config; 0 when in sync"}),
		rebootsFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "mcd_reboots_failed_total",
			Help: "Reboots the agent failed to queue"}),
		reboots: prometheus.NewCounter(prometheus.CounterOpts{Name: "mcd_reboots_total",
			Help: "Reboots the agent queued to bring a config into effect"}),
		bootTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcd_boot_time_seconds",
			Help: "Unix time the node's kernel booted (/proc/stat btime); each reboot changes it"}),
		pivotErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "mcd_pivot_errors_total",
			Help: "OS changes that failed: the OS backend could not stage them, or what booted afterwards is not what the config asks for"}),
		kubeletState: prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcd_kubelet_state",
			Help: "Consecutive failed checks of the kubelet's health endpoint; 0 while the kubelet answers"}),
		applySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mcd_apply_duration_seconds",
			Help: "Time to write a config to the node, from journal to commit", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
		driftWatchDegraded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcd_drift_watch_degraded",
			Help: "1 while some of the config's directories cannot be watched (inotify limits), so drift there is found only by the periodic check; 0 when all are watched"}),
		driftWatchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcd_drift_watch_errors_total",
			Help: "Failures of the drift monitor's file watching: kind watcher (no inotify instance), watch (a directory got no watch), events (events lost, e.g. queue overflow)"}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.state, m.drift, m.rebootsFailed, m.reboots, m.bootTime, m.applySeconds, m.pivotErrors, m.kubeletState, m.driftWatchDegraded, m.driftWatchErrors)
	}
	return m
}

// RegisterMetrics registers with reg the series Run exports when Options.Metrics is reg, so a
// test can list them (docs/metrics.md, config/prometheus) without running an agent.
func RegisterMetrics(reg prometheus.Registerer) { newMetrics(reg) }

func (m *metrics) setState(s protocol.NodeState, reason string) {
	m.state.Reset()
	if len(reason) > 120 {
		reason = reason[:120]
	}
	m.state.WithLabelValues(string(s), reason).Set(1)
}
