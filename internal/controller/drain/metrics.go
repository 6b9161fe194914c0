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

func init() { metrics.Registry.MustRegister(drainErr) }
