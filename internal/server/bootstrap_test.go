package server

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vincent-petithory/dataurl"

	"github.com/mco-dev/mco/internal/ignition"
)

func TestLoadBootstrap(t *testing.T) {
	dir := writeBootstrapDir(t, t.TempDir(), oneFile)
	writeFile(t, filepath.Join(dir, "machine-pools", "master.yaml"), "metadata:\n  name: master\nspec:\n  configuration:\n    name: rendered-master-missing\n")
	writeFile(t, filepath.Join(dir, "controller-config", "machine-config-controller.yaml"),
		"metadata:\n  name: machine-config-controller\nspec:\n  kubeAPIServerServingCAData: "+b64("CA DATA")+"\n")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kubeconfig, "apiVersion: v1\nkind: Config\n")

	pullSecret := filepath.Join(t.TempDir(), "pull-secret.json")
	writeFile(t, pullSecret, `{"auths":{}}`)

	pools, err := LoadBootstrap(BootstrapOptions{Dir: dir, KubeconfigFile: kubeconfig, PullSecretFile: pullSecret})
	if err != nil {
		t.Fatal(err)
	}
	worker := pools["worker"]
	if worker.Served.Config == nil || worker.Served.Config.Name != e2eRendered || worker.Key == "" {
		t.Fatalf("worker = %+v", worker)
	}
	if string(worker.Served.KubeletCA) != "CA DATA" || !strings.Contains(string(worker.Served.Kubeconfig), "kind: Config") {
		t.Errorf("extras: CA %q kubeconfig %q", worker.Served.KubeletCA, worker.Served.Kubeconfig)
	}
	if master := pools["master"]; master.Served.Config != nil || !master.NotFound {
		t.Errorf("master with a missing rendered config = %+v, want NotFound", master)
	}
	if string(worker.Served.PullSecret) != `{"auths":{}}` {
		t.Errorf("pull secret %q", worker.Served.PullSecret)
	}
	without, err := LoadBootstrap(BootstrapOptions{Dir: dir, KubeconfigFile: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	if w := without["worker"]; w.Served.PullSecret != nil || w.Key == worker.Key {
		t.Errorf("without --pull-secret-file: pull secret %q, key %s (with: %s)", w.Served.PullSecret, w.Key, worker.Key)
	}
	writeFile(t, pullSecret, `{"auths":{"half`)
	if _, err := LoadBootstrap(BootstrapOptions{Dir: dir, PullSecretFile: pullSecret}); err == nil {
		t.Error("a pull secret file that is not JSON loaded")
	}

	if _, err := LoadBootstrap(BootstrapOptions{Dir: t.TempDir()}); err == nil {
		t.Error("empty bootstrap dir loaded")
	}
}

// TestBootstrapReloadsOnChange edits the rendered config and the tokens file under a running
// bootstrap source and expects the new config and token to be served without a restart.
func TestBootstrapReloadsOnChange(t *testing.T) {
	dir := writeBootstrapDir(t, t.TempDir(), oneFile)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	writeFile(t, tokens, "{}\n")
	pullSecret := filepath.Join(t.TempDir(), "pull-secret.json")
	writeFile(t, pullSecret, `{"auths":{"v1":{}}}`)
	store := NewStore(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunBootstrap(ctx, store, BootstrapOptions{Dir: dir, TokensFile: tokens, PullSecretFile: pullSecret}, discardLogger())
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, store.Loaded)
	h := NewHandler(store, nil, discardLogger())
	if rec := do(h, "GET", "/config/worker", "Authorization", "Bearer fresh"); rec.Code != 403 {
		t.Fatalf("a pool the tokens file does not list: %d, want 403", rec.Code)
	}
	before, err := store.Get("worker").response(ignition.V3_4)
	if err != nil {
		t.Fatal(err)
	}

	mcFile := filepath.Join(dir, "machine-configs", e2eRendered+".yaml")
	raw, err := os.ReadFile(mcFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, mcFile, strings.Replace(string(raw), "/etc/motd", "/etc/issue", 1))
	waitFor(t, func() bool {
		resp, err := store.Get("worker").response(ignition.V3_4)
		return err == nil && resp != before && strings.Contains(string(resp.body), "/etc/issue")
	})

	writeFile(t, pullSecret, `{"auths":{"v2":{}}}`)
	waitFor(t, func() bool {
		resp, err := store.Get("worker").response(ignition.V3_4)
		return err == nil && strings.Contains(string(resp.body), dataurl.EscapeString(`{"auths":{"v2":{}}}`))
	})

	writeFile(t, tokens, "worker:\n  token: fresh\n")
	waitFor(t, func() bool { return do(h, "GET", "/config/worker", "Authorization", "Bearer fresh").Code == 200 })

	// A broken edit keeps the last good pools.
	writeFile(t, tokens, "worker: [not, a, map]\n")
	time.Sleep(4 * debounce)
	if store.Get("worker") == nil || store.Get("worker").state.Tokens == nil {
		t.Fatal("a bad tokens file dropped the served pools or their tokens")
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
