package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultKubeletHealthURL is the kubelet's healthz endpoint (--healthz-port 10248, bound to
// localhost), which the agent reaches because it runs in the host network.
const DefaultKubeletHealthURL = "http://localhost:10248/healthz"

// watchKubelet checks the kubelet's health every interval and exports the number of
// consecutive failures (OpenShift's mcd_kubelet_state). A kubelet a config broke stops
// answering at once, while its Node reads Ready until the node monitor's grace period ends.
func watchKubelet(ctx context.Context, url string, interval time.Duration, failures prometheus.Gauge, log *slog.Logger) {
	client := &http.Client{Timeout: interval}
	count := 0
	for {
		if err := checkKubelet(ctx, client, url); err != nil {
			if ctx.Err() != nil {
				return
			}
			count++
			if count == 1 {
				log.Warn("kubelet health check failed", "url", url, "err", err)
			}
		} else {
			count = 0
		}
		failures.Set(float64(count))
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func checkKubelet(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}
