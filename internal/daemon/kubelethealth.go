package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultKubeletHealthURL is the kubelet's default healthz endpoint (--healthz-port 10248,
// bound to localhost), which the agent reaches because it runs in the host network.
const DefaultKubeletHealthURL = "http://localhost:10248/healthz"

// kubeletTarget says where to check the kubelet's health now, and whether to check at all.
type kubeletTarget func() (url string, check bool)

// fixedKubelet checks url.
func fixedKubelet(url string) kubeletTarget { return func() (string, bool) { return url, true } }

// runningKubelet checks where the running kubelet's own configuration says it serves healthz
// (a KubeletConfig may change it, and a kubelet may listen on its node's address alone, as the
// dev machines' do), and the default while no kubelet runs or its configuration
// cannot be read. A kubelet that serves no healthz is not checked.
func runningKubelet(procDir string, log *slog.Logger) kubeletTarget {
	said := ""
	return func() (string, bool) {
		url, ok, found, err := runningKubeletHealthz(procDir)
		if err != nil || !found {
			if err != nil && said != err.Error() {
				said = err.Error()
				log.Warn("cannot read the running kubelet's configuration; checking its default healthz endpoint", "url", DefaultKubeletHealthURL, "err", err)
			}
			return DefaultKubeletHealthURL, true
		}
		if !ok && said != "off" {
			said = "off"
			log.Warn("the running kubelet serves no healthz (healthzPort 0): its health is not checked and mcd_kubelet_state stays 0")
		}
		return url, ok
	}
}

// watchKubelet checks the kubelet's health every interval and exports the number of
// consecutive failures (OpenShift's mcd_kubelet_state). A kubelet a config broke stops
// answering at once, while its Node reads Ready until the node monitor's grace period ends.
func watchKubelet(ctx context.Context, target kubeletTarget, interval time.Duration, failures prometheus.Gauge, log *slog.Logger) {
	client := &http.Client{Timeout: interval}
	count := 0
	for {
		url, check := target()
		if !check {
			count = 0
		} else if err := checkKubelet(ctx, client, url); err != nil {
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
