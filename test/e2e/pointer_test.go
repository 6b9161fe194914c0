package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// A new machine boots the real way: the user-data controller writes the pool's pointer config,
// and the real Ignition client, given only that, fetches the pool's config from a running
// `mco server` (TLS with the pointer's CA, the pool's bearer token) and lays down its files.
func TestNewMachineBootsFromManagedUserData(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs a control plane and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mco := testenv.RequireMCO(t)
	env := testenv.New(t)
	c := env.Client
	ca := testenv.NewServingCA(t, t.TempDir())
	const serverNS, machineNS, token = "mco-system", "openshift-machine-api", "e2e-secret-token"

	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: serverNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: machineNS}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: serverNS, Name: "mcs-ca"}, Data: map[string]string{"ca-bundle.crt": string(ca.CAPEM)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: serverNS, Name: "worker-mcs-token"}, Data: map[string][]byte{"token": []byte(token)}},
		&mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "50-worker-e2e", Labels: map[string]string{"machineconfiguration.openshift.io/role": "worker"}},
			Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/e2e.conf","mode":420,"contents":{"source":"data:,hello%20from%20the%20worker%20pool%0A"}}]}}`)}},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	worker, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, worker); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	startProcess(t, mco, "server", "--kubeconfig", env.KubeconfigPath, "--namespace", serverNS,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port), "--insecure-port", "0",
		"--tls-cert-file", ca.CertFile, "--tls-private-key-file", ca.KeyFile, "--metrics-bind-address", "")
	startProcess(t, mco, "controller", "--kubeconfig", env.KubeconfigPath,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--server-host", hostPort(port), "--server-ca", "configmap:"+serverNS+"/mcs-ca",
		"--server-namespace", serverNS, "--machine-api-namespace", machineNS)

	var userData []byte
	clustertest.Eventually(t, time.Minute, "worker-user-data-managed", func() bool {
		var s corev1.Secret
		if c.Get(ctx, client.ObjectKey{Namespace: machineNS, Name: "worker-user-data-managed"}, &s) != nil {
			return false
		}
		userData = s.Data["userData"]
		return len(userData) > 0
	})
	clustertest.Eventually(t, time.Minute, "the server to serve the rendered worker config", func() bool {
		return serves(ca.CAPEM, "https://"+hostPort(port)+"/config/worker", token)
	})

	root, out, err := testenv.RunIgnition(t, userData)
	if err != nil {
		t.Fatalf("ignition failed: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(root, "etc", "e2e.conf"))
	if err != nil || string(got) != "hello from the worker pool\n" {
		t.Fatalf("the pool's file did not arrive: %q %v\nignition output:\n%s", got, err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "etc", "machine-config-daemon", "node-annotations.json")); err != nil {
		t.Fatalf("node-annotations.json missing: %v", err)
	}
}

func serves(caPEM []byte, url, token string) bool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
