// Package install tests the install manifests in this directory (config/default): they build
// with the real kubectl's kustomize, the API server accepts them, every flag they pass exists,
// and the RBAC they ship covers every API call each component makes and nothing more
// (rbac_calls_test.go is the table of those calls).
package install

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/mco-dev/mco/internal/testenv"
)

// env is the control plane of the tests that need one; nil under -short.
var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		var err error
		if env, err = testenv.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping control plane:", err)
		}
	}
	os.Exit(code)
}

// requireEnv skips under -short (like every envtest suite) and otherwise returns the control
// plane with config/default applied to it.
func requireEnv(t *testing.T) *testenv.Env {
	t.Helper()
	if env == nil {
		t.Skip("needs a control plane; skipped by -short")
	}
	installOnce.Do(func() { installErr = install(env) })
	if installErr != nil {
		t.Fatalf("applying config/default: %v", installErr)
	}
	return env
}

var (
	installOnce sync.Once
	installErr  error
)

// install applies the kustomization the way README's Install section says, on an API server
// playing OpenShift: it serves ClusterOperators (OpenShift's cluster-version operator installs
// that CRD; mco does not) and APIServers, so the controller's calls for them are checked too.
func install(e *testenv.Env) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := testenv.InstallOpenShiftCRDs(e.Config, testenv.ClusterOperatorCRD, testenv.APIServerCRD); err != nil {
		return err
	}
	// ClusterVersions too: the registries controller reads the release image where they are served.
	if err := testenv.InstallOpenShiftCRDs(e.Config, testenv.ClusterVersionCRD); err != nil {
		return err
	}
	_, err := e.Kubectl(ctx, "apply", "--server-side", "--field-manager=mco-install", "--validate=strict", "-k", dir())
	return err
}

// dir is config/default in the checkout under test.
func dir() string { return filepath.Join(testenv.RepoRoot(), "config", "default") }

// kustomize runs `kubectl kustomize config/default` with the real kubectl.
func kustomize(kubectl string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl kustomize config/default: %w: %s", err, stderr.String())
	}
	return stdout.Bytes(), nil
}

var (
	builtOnce sync.Once
	builtObjs []*unstructured.Unstructured
	builtErr  error
)

// objects is the kustomization's output, decoded.
func objects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kubectl := testenv.RequireTool(t, "kubectl")
	builtOnce.Do(func() {
		var data []byte
		if data, builtErr = kustomize(kubectl); builtErr == nil {
			builtObjs, builtErr = decodeAll(data)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtObjs
}

func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding kustomize output: %w", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// find returns the one object of kind, namespace and name in the build, failing the test if absent.
func find(t *testing.T, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objects(t) {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("config/default has no %s %s", kind, strings.TrimPrefix(namespace+"/"+name, "/"))
	return nil
}
