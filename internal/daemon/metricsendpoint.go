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
	"k8s.io/client-go/rest"

	"github.com/mco-dev/mco/internal/metricsauth"
)

// ServeMetrics serves reg's metrics at e in the background and says whether it does: plain
// HTTP on loopback, else HTTPS with every request's token reviewed by the API server cfg points
// at (metricsauth). A flag that cannot work is an error. The node's OS matters more than the
// agent's metrics: an address taken on the host (another agent in a shared network namespace,
// a stale process) must not keep the agent from managing the node, so a failure to listen is
// said loudly on warn, once, and the agent goes on.
func ServeMetrics(e metricsauth.Endpoint, cfg *rest.Config, reg *prometheus.Registry, warn io.Writer) (served bool, err error) {
	if !e.Served() {
		return false, nil
	}
	guard, err := e.Guard(func() (*rest.Config, error) { return cfg, nil })
	if err != nil {
		return false, err
	}
	if guard != nil && guard.SelfSigned {
		fmt.Fprintf(warn, "warning: metrics on %s are served with a self-signed certificate no scraper can verify: give --metrics-cert-dir\n", e.Address)
	}
	ln, err := net.Listen("tcp", e.Address)
	if err != nil {
		fmt.Fprintf(warn, "warning: metrics are not served: %v (the agent goes on without them)\n", err)
		return false, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guard.Handler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(guard.Listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(warn, "metrics server:", err)
		}
	}()
	return true, nil
}
