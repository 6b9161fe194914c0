package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/version"
)

const fromDirPool = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: worker
spec:
  machineConfigSelector:
    matchLabels:
      machineconfiguration.openshift.io/role: worker
`

func fromDirMC(path string) string {
	return `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 50-worker-motd
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.4.0
    storage:
      files:
      - path: ` + path + `
        contents:
          source: data:,hello
`
}

// TestFromDirRendersAndReloads renders manifests in-process and re-renders when one changes.
func TestFromDirRendersAndReloads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pool.yaml"), fromDirPool)
	writeFile(t, filepath.Join(dir, "configs", "motd.yaml"), fromDirMC("/etc/motd"))
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	writeFile(t, tokens, "worker:\n  token: fromdir-token\n")
	store := NewStore(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts := FromDirOptions{Dir: dir, TokensFile: tokens, Defaults: render.Defaults{OSImageURL: "quay.io/os:1"}}
	go func() { done <- RunFromDir(ctx, store, opts, discardLogger()) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, store.Loaded)
	h := NewHandler(store, nil, discardLogger())
	if rec := do(h, "GET", "/config/worker", "Accept", accept34); rec.Code != 403 {
		t.Fatalf("without the token from --tokens-file: %d, want 403", rec.Code)
	}

	rec := do(h, "GET", "/config/worker", "Accept", accept34, "Authorization", "Bearer fromdir-token")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"path":"/etc/motd"`) {
		t.Fatalf("first render: %d %.200s", rec.Code, rec.Body)
	}
	first := store.Get("worker").state.Served.Config.Name
	if !strings.HasPrefix(first, "rendered-worker-") {
		t.Errorf("rendered name %q", first)
	}
	// Stamped as `mco render` stamps it, so both produce the same rendered config.
	if got := store.Get("worker").state.Served.Config.Annotations[protocol.GeneratedByControllerVersionAnnotation]; got != version.Get().Commit {
		t.Errorf("generated-by-controller-version %q, want the commit %q", got, version.Get().Commit)
	}

	writeFile(t, filepath.Join(dir, "configs", "motd.yaml"), fromDirMC("/etc/issue"))
	waitFor(t, func() bool {
		rec := do(h, "GET", "/config/worker", "Accept", accept34, "Authorization", "Bearer fromdir-token")
		return rec.Code == 200 && strings.Contains(rec.Body.String(), `"path":"/etc/issue"`)
	})
	if store.Get("worker").state.Served.Config.Name == first {
		t.Error("re-render kept the old rendered name")
	}
}

// TestFromDirPullSecret: --pull-secret-file is served by from-dir mode too and is part of the
// cache key.
func TestFromDirPullSecret(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pool.yaml"), fromDirPool)
	writeFile(t, filepath.Join(dir, "configs", "motd.yaml"), fromDirMC("/etc/motd"))
	pullSecret := filepath.Join(t.TempDir(), "pull-secret.json")
	writeFile(t, pullSecret, `{"auths":{}}`)
	parses := render.NewParseCache(16)
	with, err := LoadFromDir(FromDirOptions{Dir: dir, PullSecretFile: pullSecret}, parses, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	without, err := LoadFromDir(FromDirOptions{Dir: dir}, parses, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if string(with["worker"].Served.PullSecret) != `{"auths":{}}` || without["worker"].Served.PullSecret != nil {
		t.Errorf("pull secret with %q, without %q", with["worker"].Served.PullSecret, without["worker"].Served.PullSecret)
	}
	if with["worker"].Key == without["worker"].Key {
		t.Error("the pull secret is not part of the cache key")
	}
}
