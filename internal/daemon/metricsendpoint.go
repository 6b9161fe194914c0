package daemon

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsServed says whether addr asks for the metrics endpoint: empty or "0" turns it off.
func MetricsServed(addr string) bool { return addr != "" && addr != "0" }

// ServeMetrics serves reg's metrics on addr in the background and says whether it does. The
// node's OS matters more than the agent's metrics: an address taken on the host (another agent
// in a shared network namespace, a stale process) must not keep the agent from managing the
// node, so a failure to listen is said loudly on warn, once, and the agent goes on.
func ServeMetrics(addr string, reg *prometheus.Registry, warn io.Writer) (served bool) {
	if !MetricsServed(addr) {
		return false
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(warn, "warning: metrics are not served: %v (the agent goes on without them)\n", err)
		return false
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(warn, "metrics server:", err)
		}
	}()
	return true
}
