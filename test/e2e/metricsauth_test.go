package e2e

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// metricsName is the one name the metrics certificate carries; PodMonitors verify it.
const metricsName = "mco-metrics.openshift-machine-config-operator.svc"

// metricsNeedAToken: with README's monitoring installed, every metrics endpoint answers from a
// real pod's network namespace (curl run in it with nsenter, since mco's image has no HTTP
// client) only over HTTPS, with the certificate the PodMonitors verify: 401 without a token,
// 403 for a service account not allowed get /metrics, the metrics for the scraper's token, and
// no metrics over plain HTTP.
func metricsNeedAToken(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	kubectl := testenv.RequireTool(t, "kubectl")
	k := func(args ...string) string {
		t.Helper()
		out, err := clustertest.Run(ctx, kubectl, append([]string{"--kubeconfig", filepath.Join(cl.Dir, "kubeconfig")}, args...)...)
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	const ns = "openshift-machine-config-operator"
	scraper, err := base64.StdEncoding.DecodeString(k("-n", ns, "get", "secret", "mco-metrics-scraper-token", "-o", "jsonpath={.data.token}"))
	if err != nil {
		t.Fatal(err)
	}
	denied := strings.TrimSpace(k("-n", "default", "create", "token", "default"))
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte(k("-n", ns, "get", "configmap", "mco-metrics-ca", "-o", "jsonpath={.data.ca-bundle\\.crt}")), 0o644); err != nil {
		t.Fatal(err)
	}

	// A workload pod on a worker: the client's network namespace.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "metrics-client"}, Spec: corev1.PodSpec{
		NodeName:   "worker-0",
		Containers: []corev1.Container{{Name: "pause", Image: image.PauseRef, ImagePullPolicy: corev1.PullNever}},
	}}
	if err := cl.C.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.C.Delete(context.Background(), pod) })
	clustertest.Eventually(t, 2*time.Minute, "the client pod running", func() bool {
		return cl.C.Get(ctx, client.ObjectKeyFromObject(pod), pod) == nil && pod.Status.Phase == corev1.PodRunning && pod.Status.PodIP != ""
	})
	netns := podNetns(t, ctx, pod.Status.PodIP)

	var controller corev1.PodList
	if err := cl.C.List(ctx, &controller, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/component": "controller"}); err != nil || len(controller.Items) == 0 {
		t.Fatalf("the controller's pod: %v (%d)", err, len(controller.Items))
	}
	for _, ep := range []struct{ who, addr, series string }{
		{"controller", net.JoinHostPort(controller.Items[0].Status.PodIP, "9191"), "controller_runtime_reconcile_total"},
		{"server", net.JoinHostPort(cl.NodeIP(t, ctx, "master-0"), "22625"), "go_goroutines"},
		{"agent", net.JoinHostPort(cl.NodeIP(t, ctx, "worker-0"), "8797"), "mcd_state"},
	} {
		t.Run(ep.who, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(ep.addr)
			curl := func(args ...string) (code int, body string) {
				t.Helper()
				full := append([]string{"--net=" + netns, "curl", "-sS", "--max-time", "10", "-o", "-", "-w", "\n%{http_code}"}, args...)
				out, err := clustertest.Run(ctx, "nsenter", full...)
				s := strings.TrimRight(string(out), "\n")
				i := strings.LastIndex(s, "\n")
				code, _ = strconv.Atoi(s[i+1:])
				if err != nil && code == 0 {
					return 0, s
				}
				return code, s[:max(i, 0)]
			}
			https := func(token string) (int, string) {
				args := []string{"--cacert", ca, "--connect-to", metricsName + ":" + port + ":" + ep.addr,
					"https://" + metricsName + ":" + port + "/metrics"}
				if token != "" {
					args = append(args, "-H", "Authorization: Bearer "+token)
				}
				return curl(args...)
			}
			// The certificate reaches the pods through an optional Secret volume, within a
			// minute or so of the controller issuing it.
			var code int
			var body string
			clustertest.Eventually(t, 3*time.Minute, ep.who+"'s metrics for the scraper's token", func() bool {
				code, body = https(string(scraper))
				return code == 200
			})
			if !strings.Contains(body, ep.series) {
				t.Errorf("%s's metrics have no %s", ep.who, ep.series)
			}
			for _, c := range []struct {
				what, token string
				want        int
			}{{"no token", "", 401}, {"a service account not allowed get /metrics", denied, 403}} {
				if code, body := https(c.token); code != c.want || strings.Contains(body, ep.series) {
					t.Errorf("%s, %s: HTTP %d (want %d)%s", ep.who, c.what, code, c.want, map[bool]string{true: ", with metrics"}[strings.Contains(body, ep.series)])
				}
			}
			if code, body := curl("http://" + ep.addr + "/metrics"); code == 200 || strings.Contains(body, ep.series) {
				t.Errorf("%s answered plain HTTP with HTTP %d: %.200s", ep.who, code, body)
			}
		})
	}
}

// podNetns is the network namespace (a /proc path) holding the pod address ip: the pod's pause
// process, found among the host's processes (a machine's are the host's too, in their own PID
// namespace).
func podNetns(t *testing.T, ctx context.Context, ip string) string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, comm := range procs {
		if b, err := os.ReadFile(comm); err != nil || strings.TrimSpace(string(b)) != "pause" {
			continue
		}
		ns := filepath.Join(filepath.Dir(comm), "ns", "net")
		out, err := clustertest.Run(ctx, "nsenter", "--net="+ns, "ip", "-o", "addr")
		if err == nil && strings.Contains(string(out), " "+ip+"/") {
			return ns
		}
	}
	t.Fatalf("no pause process holds the pod address %s", ip)
	return ""
}
