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
	if daemon.ServeMetrics(taken.Addr().String(), prometheus.NewRegistry(), &warn) {
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
	if !daemon.ServeMetrics(addr, reg, &warn) {
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
	if daemon.ServeMetrics("0", reg, &warn) || daemon.ServeMetrics("", reg, &warn) {
		t.Error(`"0" and "" turn the endpoint off, yet serveMetrics says it serves`)
	}
}
