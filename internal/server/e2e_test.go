package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	e2eRendered = "rendered-worker-e2e"
	e2eToken    = "e2e-token-5f2c"
	// testSpecHeader lets a pointer config ask for a spec older than the real client's own
	// (it always sends version=3.6.0), imitating older clients; see acceptFromTestHeader.
	testSpecHeader = "X-Mco-Test-Spec"
)

const e2eIgnition = `{
  "ignition": {"version": "3.2.0"},
  "storage": {"files": [
    {"path": "/etc/e2e/hello.txt", "mode": 420, "contents": {"source": "data:,hello%20from%20mco%0A"}},
    {"path": "/etc/e2e/second.conf", "mode": 384, "contents": {"source": "data:,key%3Dvalue%0A"}}
  ]},
  "systemd": {"units": [
    {"name": "e2e.service", "enabled": true, "contents": "[Unit]\nDescription=e2e\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
    {"name": "e2e-masked.service", "mask": true},
    {"name": "e2e-dropin.service", "dropins": [{"name": "10-e2e.conf", "contents": "[Service]\nEnvironment=E2E=1\n"}]}
  ]}
}`

const e2ePullSecret = `{"auths":{"quay.io":{"auth":"ZTJlOnNlY3JldA=="}}}`

// TestRealIgnitionClient boots temp roots with the real Ignition binary from a running server
// over TLS with a bearer token, once per served 3.x spec, and checks the pool's files, units
// and the server's appended files (the pull secret with mode 0600) land; without the token
// nothing is written, nor for a pool the tokens file does not list.
func TestRealIgnitionClient(t *testing.T) {
	dir := t.TempDir()
	ca := testenv.NewServingCA(t, dir)
	bootstrapDir := writeBootstrapDir(t, filepath.Join(dir, "bootstrap"), e2eIgnition)
	// A second pool serving the same config, with no token in the tokens file.
	writeFile(t, filepath.Join(bootstrapDir, "machine-pools", "infra.yaml"), "metadata:\n  name: infra\nstatus:\n  configuration:\n    name: "+e2eRendered+"\n")
	tokensFile := filepath.Join(dir, "tokens.yaml")
	writeFile(t, tokensFile, "worker:\n  token: "+e2eToken+"\n")
	pullSecretFile := filepath.Join(dir, "pull-secret.json")
	writeFile(t, pullSecretFile, e2ePullSecret)

	url := startTLSServer(t, ca, BootstrapOptions{Dir: bootstrapDir, TokensFile: tokensFile, PullSecretFile: pullSecretFile})

	for _, spec := range []string{"3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} {
		t.Run(spec, func(t *testing.T) {
			root, out, err := testenv.RunIgnition(t, pointerConfig(t, url, ca.CAPEM, e2eToken, spec))
			if err != nil {
				t.Fatalf("ignition failed: %v\n%s", err, out)
			}
			assertFile(t, root, "/etc/e2e/hello.txt", "hello from mco\n", 0o644)
			assertFile(t, root, "/etc/e2e/second.conf", "key=value\n", 0o600)
			assertContains(t, root, "/etc/systemd/system/e2e.service", "Description=e2e")
			assertContains(t, root, "/etc/systemd/system/e2e-dropin.service.d/10-e2e.conf", "E2E=1")
			assertContains(t, root, "/etc/systemd/system-preset/20-ignition.preset", "enable e2e.service")
			if target, err := os.Readlink(filepath.Join(root, "etc/systemd/system/e2e-masked.service")); err != nil || target != "/dev/null" {
				t.Errorf("masked unit: %q, %v", target, err)
			}
			assertFile(t, root, PullSecretPath, e2ePullSecret, 0o600)
			assertContains(t, root, NodeAnnotationsPath, `"machineconfiguration.openshift.io/currentConfig":"`+e2eRendered+`"`)
			// The encapsulated config carries the spec the server chose: proof the client got it.
			assertContains(t, root, EncapsulatedConfigPath, `{"ignition":{"version":"`+spec+`"}}`)
			// Ignition gunzipped the content copy.
			var full mcfgv1.MachineConfig
			if err := json.Unmarshal(readRoot(t, root, MachineConfigCopyPath), &full); err != nil || full.Name != e2eRendered {
				t.Errorf("content copy: %v, name %q", err, full.Name)
			}
		})
	}

	refused := map[string][]byte{
		"without token nothing is written": pointerConfig(t, url, ca.CAPEM, "", "3.4.0"),
		// Presenting worker's token, which is no token of infra's.
		"a pool without a token is refused": bytes.ReplaceAll(pointerConfig(t, url, ca.CAPEM, e2eToken, "3.4.0"), []byte("/config/worker"), []byte("/config/infra")),
	}
	for name, pointer := range refused {
		t.Run(name, func(t *testing.T) {
			root, out, err := testenv.RunIgnition(t, pointer)
			if err == nil {
				t.Fatalf("ignition succeeded:\n%s", out)
			}
			if !strings.Contains(out, "Forbidden") {
				t.Errorf("ignition output does not say Forbidden:\n%s", out)
			}
			for _, path := range []string{"etc/e2e/hello.txt", PullSecretPath} {
				if _, err := os.Stat(filepath.Join(root, path)); !os.IsNotExist(err) {
					t.Errorf("%s written: %v", path, err)
				}
			}
		})
	}
}

// acceptFromTestHeader rewrites Accept from testSpecHeader, standing in for an older client.
func acceptFromTestHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if spec := r.Header.Get(testSpecHeader); spec != "" {
			r.Header.Set("Accept", "application/vnd.coreos.ignition+json;version="+spec+", */*;q=0.1")
		}
		next.ServeHTTP(w, r)
	})
}

// startTLSServer runs bootstrap mode behind HTTPS on 127.0.0.1 and returns the base URL. wrap,
// when given, wraps the handler (as Run adds the rate limit).
func startTLSServer(t *testing.T, ca testenv.ServingCA, opts BootstrapOptions, wrap ...func(http.Handler) http.Handler) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := discardLogger()
	store := NewStore(time.Hour)
	listeners, err := Listen(ListenOptions{SecureAddress: "127.0.0.1:0", CertFile: ca.CertFile, KeyFile: ca.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	go func() { _ = RunBootstrap(ctx, store, opts, log); done <- struct{}{} }()
	go func() {
		var handler http.Handler = NewHandler(store, nil, log)
		for _, w := range wrap {
			handler = w(handler)
		}
		_ = listeners.Serve(ctx, acceptFromTestHeader(handler), log)
		done <- struct{}{}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	waitFor(t, store.Loaded)
	return "https://" + listeners.Secure.Addr().String()
}

// pointerConfig is the pointer config mco writes for the worker pool (userdata.PointerConfig,
// at the default --user-data-spec-version), so the real client boots mco's actual format. Only
// two test needs are added: testSpecHeader, to imitate a client asking for spec, and
// ignition.timeouts.httpTotal, because mco deliberately sets none and Ignition would retry a
// refused fetch forever.
func pointerConfig(t *testing.T, url string, caPEM []byte, token, spec string) []byte {
	t.Helper()
	raw, err := userdata.PointerConfig(userdata.Pointer{
		Pool:        "worker",
		ServerHost:  strings.TrimPrefix(url, "https://"),
		CABundle:    caPEM,
		Token:       token,
		SpecVersion: ignition.V3_4,
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ign := doc["ignition"].(map[string]any)
	merge := ign["config"].(map[string]any)["merge"].([]any)
	if len(merge) != 1 {
		t.Fatalf("pointer config merges %d sources, want 1: %s", len(merge), raw)
	}
	source := merge[0].(map[string]any)
	headers, _ := source["httpHeaders"].([]any)
	source["httpHeaders"] = append(headers, map[string]any{"name": testSpecHeader, "value": spec})
	timeouts, _ := ign["timeouts"].(map[string]any)
	if timeouts == nil {
		timeouts = map[string]any{}
		ign["timeouts"] = timeouts
	}
	timeouts["httpTotal"] = 10
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeBootstrapDir lays out OpenShift's bootstrap directory with a worker pool serving
// e2eRendered, whose Ignition config is ign.
func writeBootstrapDir(t *testing.T, dir, ign string) string {
	t.Helper()
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Status.Configuration.Name = e2eRendered
	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: e2eRendered},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}},
	}
	writeYAML(t, filepath.Join(dir, "machine-pools", "worker.yaml"), pool)
	writeYAML(t, filepath.Join(dir, "machine-configs", e2eRendered+".yaml"), mc)
	return dir
}

func writeYAML(t *testing.T, path string, obj any) {
	t.Helper()
	raw, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(raw))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readRoot(t *testing.T, root, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func assertFile(t *testing.T, root, path, content string, mode os.FileMode) {
	t.Helper()
	if got := string(readRoot(t, root, path)); got != content {
		t.Errorf("%s = %q, want %q", path, got, content)
	}
	if info, err := os.Stat(filepath.Join(root, path)); err != nil || info.Mode().Perm() != mode {
		t.Errorf("%s mode = %v, want %v", path, info.Mode().Perm(), mode)
	}
}

func assertContains(t *testing.T, root, path, want string) {
	t.Helper()
	if got := string(readRoot(t, root, path)); !strings.Contains(got, want) {
		t.Errorf("%s does not contain %q:\n%.400s", path, want, got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
