package daemon_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/metricsauth"
)

// A metrics address someone else holds (another agent sharing the host's network namespace)
// leaves the agent running without metrics instead of stopping it.
func TestServeMetricsOnATakenAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var warn bytes.Buffer
	if served, err := daemon.ServeMetrics(metricsauth.Endpoint{Address: taken.Addr().String()}, nil, prometheus.NewRegistry(), &warn); served || err != nil {
		t.Fatal("serveMetrics says it serves on an address another listener holds")
	}
	if !strings.Contains(warn.String(), "metrics are not served") || !strings.Contains(warn.String(), taken.Addr().String()) {
		t.Errorf("the warning does not say metrics are off and why: %q", warn.String())
	}
}

// TestServeMetricsOnAFreeAddress: the endpoint answers with the registry's metrics.
func TestServeMetricsOnAFreeAddress(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "mco_test_served_total", Help: "a counter to find"}))
	var warn bytes.Buffer
	if served, err := daemon.ServeMetrics(metricsauth.Endpoint{Address: addr}, nil, reg, &warn); !served || err != nil {
		t.Fatalf("serveMetrics does not serve on a free address: %s", warn.String())
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "mco_test_served_total 0") {
		t.Errorf("GET /metrics: %s\n%s", resp.Status, body)
	}
	for _, off := range []string{"0", ""} {
		if served, _ := daemon.ServeMetrics(metricsauth.Endpoint{Address: off}, nil, reg, &warn); served {
			t.Errorf("%q turns the endpoint off, yet serveMetrics says it serves", off)
		}
	}
}

// An address off loopback is never served without authentication: without an API server to
// review tokens with, the agent refuses the flag.
func TestServeMetricsOffLoopbackNeedsTheAPIServer(t *testing.T) {
	var warn bytes.Buffer
	served, err := daemon.ServeMetrics(metricsauth.Endpoint{Address: ":0"}, nil, prometheus.NewRegistry(), &warn)
	if served || err == nil || !strings.Contains(err.Error(), "--metrics-bind-address") {
		t.Errorf("ServeMetrics(:0) without an API server: served %v, err %v; want an error naming the flag", served, err)
	}
}
