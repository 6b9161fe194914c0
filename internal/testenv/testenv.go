// Package testenv starts a real kube-apiserver and etcd (built by `make tools`) through
// controller-runtime's envtest, installs mco's CRDs, and hands back clients. Tests that need an
// API server use it; there is no fake API server in this project.
//
// A missing binary is a test failure that says to run `make tools`, never a skip: CI must not
// pass while testing nothing.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mco-dev/mco/config/crd"
	"github.com/mco-dev/mco/internal/scheme"
)

// ToolsDirEnv overrides where the control-plane binaries are looked up.
const ToolsDirEnv = "MCO_TOOLS_DIR"

// RequiredBinaries are what `make tools` builds and an Env needs.
var RequiredBinaries = []string{"kube-apiserver", "etcd", "kubectl"}

// Env is a running control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	// KubeconfigPath is a kubeconfig file for kubectl or child processes.
	KubeconfigPath string
	// ToolsDir holds kubectl, ignition and the control-plane binaries.
	ToolsDir string

	env *envtest.Environment
	dir string
}

// RepoRoot is the checkout this package was compiled from.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ToolsDir is where `make tools` puts the binaries, unless MCO_TOOLS_DIR says otherwise.
func ToolsDir() string {
	if dir := os.Getenv(ToolsDirEnv); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin", "tools")
}

// Tool returns the path of a binary built by `make tools`, or an error telling how to get it.
func Tool(name string) (string, error) {
	path := filepath.Join(ToolsDir(), name)
	if !executable(path) {
		return "", fmt.Errorf("%s not found at %s: run `make tools` (or set %s)", name, path, ToolsDirEnv)
	}
	return path, nil
}

func executable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// RequireTool is Tool for tests: a missing binary fails the test.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := Tool(name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Start brings up etcd and kube-apiserver with mco's CRDs installed. Call Stop when done.
func Start() (*Env, error) {
	for _, bin := range RequiredBinaries {
		if _, err := Tool(bin); err != nil {
			return nil, err
		}
	}
	// The CRDs as every install gets them (config/crd with mco's short names, config/crd-mco).
	crds, err := crd.Installed()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: ToolsDir(),
		CRDInstallOptions:     envtest.CRDInstallOptions{Scheme: scheme.Scheme, CRDs: crds},
		// The apiserver of a 2-core CI machine that is also compiling can be slow to come up.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", ToolsDir(), err)
	}
	e := &Env{Config: cfg, env: env, ToolsDir: ToolsDir()}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if e.dir, err = os.MkdirTemp("", "mco-testenv-"); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	e.KubeconfigPath = filepath.Join(e.dir, "kubeconfig")
	if err := os.WriteFile(e.KubeconfigPath, env.KubeConfig, 0o600); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// New starts an Env for one test and stops it when the test ends.
func New(t testing.TB) *Env {
	t.Helper()
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping test control plane: %v", err)
		}
	})
	return e
}

// Stop shuts the control plane down and removes its files.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if e.dir != "" {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	return err
}

// Kubectl runs the real kubectl against this control plane and returns its stdout.
func (e *Env) Kubectl(ctx context.Context, args ...string) (string, error) {
	kubectl := filepath.Join(e.ToolsDir, "kubectl")
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", e.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// RequireMCO returns bin/mco, built by `make build`; a missing binary fails the test.
func RequireMCO(t testing.TB) string {
	t.Helper()
	path := filepath.Join(RepoRoot(), "bin", "mco")
	if !executable(path) {
		t.Fatalf("%s not found: run `make build`", path)
	}
	return path
}
