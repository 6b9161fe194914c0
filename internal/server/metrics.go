package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the server's Prometheus collectors. Pool labels only ever carry names of pools
// the server knows ("unknown" otherwise), so probing random paths cannot explode cardinality.
type Metrics struct {
	requests *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// refused counts 403s by pool and Refusal, so a scraper or a machine with a stale token
	// shows up without reading logs.
	refused *prometheus.CounterVec
	// rateLimited counts /config/ requests answered 503 by the per-client rate limit, which
	// happens before a pool is looked up (so it has no pool label).
	rateLimited prometheus.Counter
	// templateFailures counts etcd_index requests answered 500 because a content of the
	// pool's config cannot be templated: a MachineConfig to fix, which a master boot hits.
	templateFailures *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: not registered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_config_requests_total",
			Help: "Requests for /config/<pool> by pool, HTTP status code and served Ignition spec version.",
		}, []string{"pool", "code", "version"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_config_response_bytes_total",
			Help: "Body bytes of served configs by pool.",
		}, []string{"pool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcs_config_request_duration_seconds",
			Help:    "Time to answer /config/<pool> requests, by pool.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		}, []string{"pool"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_config_requests_refused_total",
			Help: "Config requests refused with 403, by pool and reason: no-token-configured, missing-authorization or invalid-token.",
		}, []string{"pool", "reason"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcs_config_requests_rate_limited_total",
			Help: "Requests for /config/ refused (503 with Retry-After) because their client address was over --rate-limit.",
		}),
		templateFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_config_template_failures_total",
			Help: "Requests for /config/<pool>?etcd_index=N answered 500 because a content of the pool's config cannot be templated, by pool.",
		}, []string{"pool"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.bytes, m.latency, m.refused, m.rateLimited, m.templateFailures)
	}
	return m
}

func (m *Metrics) observe(pool string, code int, version string, bytes int, seconds float64) {
	m.requests.WithLabelValues(pool, statusText(code), version).Inc()
	if bytes > 0 {
		m.bytes.WithLabelValues(pool).Add(float64(bytes))
	}
	m.latency.WithLabelValues(pool).Observe(seconds)
}

// statusText avoids strconv allocations for the codes we answer with.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 304:
		return "304"
	case 400:
		return "400"
	case 403:
		return "403"
	case 404:
		return "404"
	case 500:
		return "500"
	case 503:
		return "503"
	}
	return "other"
}
