package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	mcc "github.com/mco-dev/mco/internal/controller"
	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/server"
	"github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/testenv"
)

const mcoNS = "openshift-machine-config-operator"

// Each component serves its metrics on every address of the host (":port"), as config/default
// and config/prometheus have them, under its own ServiceAccount with the shipped RBAC, and with
// the metrics certificate the controller issued. A scraper that verifies the certificate
// against ConfigMap mco-metrics-ca for the name in the PodMonitors gets 401 without a token,
// 403 with the token of a ServiceAccount not bound to mco-metrics-reader, the metrics with
// config/prometheus's scraper's token; plain HTTP gets no metrics.
func TestMetricsEndpointsNeedATokenAllowedToGetMetrics(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(env.Config)
	root := testenv.RepoRoot()
	if _, err := env.Kubectl(ctx, "apply", "--server-side", "-k", filepath.Join(root, "config", "default")); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(root, "config", "prometheus", "scraper.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(mcoNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "not-a-scraper"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	certDir := t.TempDir() // the pods' mount of Secret mco-metrics-tls

	// The controller: `mco controller`'s manager, issuing the metrics certificate.
	controllerAddr := freePort(t)
	metricsCert, err := servingcert.ParseNames([]string{servingcertcontroller.MetricsServerName(mcoNS)})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcc.NewManager(configAs(t, ctx, admin, "mco-controller"), mcc.Options{
		MetricsAddr: controllerAddr, MetricsCertDir: certDir, ProbeAddr: "0",
		MetricsCert: &servingcertcontroller.Options{Namespace: mcoNS, Objects: servingcertcontroller.MetricsObjects, Names: metricsCert, Policy: servingcert.DefaultPolicy()},
	})
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-mgrDone; err != nil {
			t.Errorf("controller manager: %v", err)
		}
	}()

	// Its pod starts before the Secret exists: handshakes fail until the kubelet writes it.
	waitListening(t, ctx, controllerAddr)
	if _, err := tls.Dial("tcp", loopback(controllerAddr), &tls.Config{InsecureSkipVerify: true}); err == nil {
		t.Error("a TLS handshake succeeded before the metrics certificate was issued")
	}
	secret := waitSecret(t, ctx, admin, servingcertcontroller.MetricsObjects.ServingSecret)
	for _, name := range []string{metricsauth.CertFile, metricsauth.KeyFile} {
		if err := os.WriteFile(filepath.Join(certDir, name), secret.Data[name], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bundle, err := admin.CoreV1().ConfigMaps(mcoNS).Get(ctx, servingcertcontroller.MetricsObjects.Bundle, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trusted := x509.NewCertPool()
	if !trusted.AppendCertsFromPEM([]byte(bundle.Data[servingcert.KeyBundle])) {
		t.Fatalf("ConfigMap %s holds no CA", bundle.Name)
	}

	// The server, cluster mode, as its flags have it (the kubeconfig of its ServiceAccount).
	serverAddr, serverConfigs := freePort(t), freePort(t)
	serverCtx, stopServer := context.WithCancel(ctx)
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- server.Settings{
			Kubeconfig: kubeconfigAs(t, ctx, admin, "mco-server"), Namespace: mcoNS, PullSecret: "",
			BindAddress: "127.0.0.1", InsecurePort: portOf(t, serverConfigs),
			MetricsAddress: serverAddr, MetricsCertDir: certDir,
			LogFormat: "text", MemoryLimit: "none", MaxConnections: 10,
		}.Serve(serverCtx)
	}()
	defer func() {
		// Stopped once it has synced, so that its end is a clean one: the pool is known (404
		// before), and refused for want of a token.
		waitStatus(t, ctx, "http://"+loopback(serverConfigs)+"/config/worker", http.StatusForbidden)
		stopServer()
		if err := <-serverDone; err != nil {
			t.Errorf("server: %v", err)
		}
	}()

	// The agent, as `mco daemon` starts its endpoint.
	agentAddr := freePort(t)
	reg := prometheus.NewRegistry()
	daemon.RegisterMetrics(reg)
	var warn strings.Builder
	if served, err := daemon.ServeMetrics(metricsauth.Endpoint{Address: agentAddr, CertDir: certDir}, configAs(t, ctx, admin, "mco-daemon"), reg, &warn); !served || err != nil {
		t.Fatalf("agent metrics: served %v, %v: %s", served, err, warn.String())
	}

	scraper := token(t, ctx, admin, "mco-metrics-scraper")
	other := token(t, ctx, admin, "not-a-scraper")
	for _, c := range []struct{ component, addr, metric string }{
		{"controller", controllerAddr, "controller_runtime_reconcile_total"},
		{"server", serverAddr, "go_goroutines"},
		{"agent", agentAddr, "mcd_config_drift"},
	} {
		t.Run(c.component, func(t *testing.T) {
			waitListening(t, ctx, c.addr)
			url := "https://" + loopback(c.addr) + "/metrics"
			scrape := func(token string) (int, string) {
				t.Helper()
				return get(t, ctx, url, trusted, token)
			}
			if code, body := scrape(""); code != http.StatusUnauthorized {
				t.Errorf("without a token: %d, want 401: %.200s", code, body)
			}
			if code, body := scrape("not-a-token"); code != http.StatusUnauthorized {
				t.Errorf("with a token the API server does not accept: %d, want 401: %.200s", code, body)
			}
			if code, body := scrape(other); code != http.StatusForbidden {
				t.Errorf("with the token of a ServiceAccount not bound to mco-metrics-reader: %d, want 403: %.200s", code, body)
			}
			if code, body := scrape(scraper); code != http.StatusOK || !strings.Contains(body, c.metric) {
				t.Errorf("with the scraper's token: %d, want 200 and %s: %.300s", code, c.metric, body)
			}
			// Plain HTTP, even with the right token, gets no metrics.
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+loopback(c.addr)+"/metrics", nil)
			req.Header.Set("Authorization", "Bearer "+scraper)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK || strings.Contains(string(body), c.metric) {
					t.Errorf("plain HTTP: %s with metrics", resp.Status)
				}
			}
		})
	}
}

// get fetches url over HTTPS verifying the server as a PodMonitor does: the CA bundle and the
// fixed name, not the address.
func get(t *testing.T, ctx context.Context, url string, trusted *x509.CertPool, token string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: trusted, ServerName: servingcertcontroller.MetricsServerName(mcoNS),
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// token is a TokenRequest token of ServiceAccount sa of mco's namespace.
func token(t *testing.T, ctx context.Context, admin kubernetes.Interface, sa string) string {
	t.Helper()
	tr, err := admin.CoreV1().ServiceAccounts(mcoNS).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", sa, err)
	}
	return tr.Status.Token
}

// configAs reaches the test API server as ServiceAccount sa, by its token alone.
func configAs(t *testing.T, ctx context.Context, admin kubernetes.Interface, sa string) *rest.Config {
	t.Helper()
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = token(t, ctx, admin, sa)
	return cfg
}

// kubeconfigAs is configAs written as a kubeconfig file.
func kubeconfigAs(t *testing.T, ctx context.Context, admin kubernetes.Interface, sa string) string {
	t.Helper()
	cfg := configAs(t, ctx, admin, sa)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func waitSecret(t *testing.T, ctx context.Context, admin kubernetes.Interface, name string) *corev1.Secret {
	t.Helper()
	for {
		s, err := admin.CoreV1().Secrets(mcoNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil && len(s.Data[metricsauth.CertFile]) > 0 {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Secret %s never issued: %v", name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePort is ":<port>": every address of the host, a port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return ":" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	p, err := strconv.Atoi(strings.TrimPrefix(addr, ":"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// loopback is how this test reaches an endpoint listening on every address.
func loopback(addr string) string { return "127.0.0.1" + addr }

func waitStatus(t *testing.T, ctx context.Context, url string, want int) {
	t.Helper()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s never answered %d", url, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func waitListening(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	for {
		c, err := net.Dial("tcp", loopback(addr))
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing listens on %s: %v", addr, errors.Join(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
