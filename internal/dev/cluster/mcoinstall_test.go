package cluster

import (
	"testing"

	"sigs.k8s.io/yaml"
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
		out := installOverlay("../../../config/default", tag, "10.87.0.1", "https://10.87.0.1:6443")
		if err := yaml.Unmarshal([]byte(out), &k); err != nil {
			t.Fatalf("tag %s: %v\n%s", tag, err, out)
		}
		if len(k.Images) != 1 || k.Images[0].NewTag != tag || k.Images[0].Name != mcoImage {
			t.Errorf("tag %s: images %+v", tag, k.Images)
		}
		if len(k.Resources) != 1 || k.Resources[0] != "../../../config/default" {
			t.Errorf("tag %s: resources %v", tag, k.Resources)
		}
		if len(k.ConfigMapGenerator) != 1 || len(k.ConfigMapGenerator[0].Literals) != 2 ||
			k.ConfigMapGenerator[0].Literals[0] != "serverHost=10.87.0.1" || k.ConfigMapGenerator[0].Literals[1] != "apiServerURL=https://10.87.0.1:6443" {
			t.Errorf("tag %s: configMapGenerator %+v", tag, k.ConfigMapGenerator)
		}
	}
}
