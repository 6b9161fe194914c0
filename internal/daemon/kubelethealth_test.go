package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// mcd_kubelet_state counts consecutive failed checks and drops to 0 when the kubelet answers.
func TestKubeletHealthCountsConsecutiveFailures(t *testing.T) {
	var healthy atomic.Bool
	kubelet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			http.Error(w, "[-]syncloop failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer kubelet.Close()
	m := newMetrics(prometheus.NewRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		watchKubelet(ctx, fixedKubelet(kubelet.URL), 10*time.Millisecond, m.kubeletState, slog.Default())
		close(done)
	}()
	defer func() { cancel(); <-done }()

	waitGauge(t, m.kubeletState, "three failures in a row", func(v float64) bool { return v >= 3 })
	healthy.Store(true)
	waitGauge(t, m.kubeletState, "healthy again", func(v float64) bool { return v == 0 })
	healthy.Store(false)
	waitGauge(t, m.kubeletState, "counting again from 1", func(v float64) bool { return v >= 1 })
}

func waitGauge(t *testing.T, g prometheus.Gauge, what string, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(testutil.ToFloat64(g)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: mcd_kubelet_state is %v", what, testutil.ToFloat64(g))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
