package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestInstallOverlayQuotesEveryValue: `git describe` gives tags such as 28586e2, which YAML reads
// as the number 2858600 unless quoted (kustomize then refused the install: "cannot unmarshal
// number into ... newTag of type string").
func TestInstallOverlayQuotesEveryValue(t *testing.T) {
	for _, tag := range []string{"28586e2", "1234567", "true", "f5dc6c8", "v1.2.3-4-gabcdef0-dirty"} {
		var k struct {
			Resources []string `json:"resources"`
			Images    []struct {
				Name   string `json:"name"`
				NewTag string `json:"newTag"`
			} `json:"images"`
			ConfigMapGenerator []struct {
				Literals []string `json:"literals"`
			} `json:"configMapGenerator"`
		}
		out := installOverlay("../../../config/default", tag, "10.87.0.1", "https://10.87.0.1:6443", devnet.Slot(1))
		if err := yaml.Unmarshal([]byte(out), &k); err != nil {
			t.Fatalf("tag %s: %v\n%s", tag, err, out)
		}
		if len(k.Images) != 1 || k.Images[0].NewTag != tag || k.Images[0].Name != mcoImage {
			t.Errorf("tag %s: images %+v", tag, k.Images)
		}
		if len(k.Resources) != 1 || k.Resources[0] != "../../../config/default" {
			t.Errorf("tag %s: resources %v", tag, k.Resources)
		}
		if len(k.ConfigMapGenerator) != 1 || len(k.ConfigMapGenerator[0].Literals) != 3 ||
			k.ConfigMapGenerator[0].Literals[0] != "serverHost=10.87.0.1" || k.ConfigMapGenerator[0].Literals[1] != "apiServerURL=https://10.87.0.1:6443" ||
			k.ConfigMapGenerator[0].Literals[2] != "podNetworks=10.245.0.0/16" {
			t.Errorf("tag %s: configMapGenerator %+v", tag, k.ConfigMapGenerator)
		}
	}
}

// TestInstallOverlayBuilds: kustomize builds the overlay over config/default, the agents get the
// slot's server guard table and the ConfigMap its pod range.
func TestInstallOverlayBuilds(t *testing.T) {
	kubectl := testenv.RequireTool(t, "kubectl")
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(installOverlay(base, "v1", "10.87.1.2:22623", "https://10.87.1.1:6443", devnet.Slot(1))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	for _, want := range []string{"podNetworks: 10.245.0.0/16"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the built install has no %q", want)
		}
	}
}
