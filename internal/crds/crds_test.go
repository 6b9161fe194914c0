package crds

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/config/crd"
	"github.com/mco-dev/mco/internal/testenv"
)

// The CRDs in config/crd must be exactly the generated ones of the pinned openshift/api:
// a hand edit or a bumped pin without `make crds` fails here.
func TestCRDCopiesMatchPinnedModule(t *testing.T) {
	root := testenv.RepoRoot()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		t.Fatalf("locating github.com/openshift/api: %v", err)
	}
	moduleDir := strings.TrimSpace(string(out))
	sources, err := Sources(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) == 0 {
		t.Fatal("hack/crds.txt lists no CRDs")
	}
	want := map[string]bool{}
	for _, src := range sources {
		name := filepath.Base(src)
		want[name] = true
		upstream, err := os.ReadFile(filepath.Join(moduleDir, src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		copied, err := os.ReadFile(filepath.Join(root, "config", "crd", name))
		if err != nil {
			t.Fatalf("config/crd/%s: %v (run `make crds`)", name, err)
		}
		if !bytes.Equal(upstream, copied) {
			t.Errorf("config/crd/%s differs from %s in the pinned module: run `make crds`", name, src)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		if !want[e.Name()] {
			t.Errorf("config/crd/%s is not listed in hack/crds.txt", e.Name())
		}
	}
}

func TestEmbeddedCRDsDecode(t *testing.T) {
	all, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	sources, _ := Sources(testenv.RepoRoot())
	if len(all) != len(sources) {
		t.Fatalf("embedded %d CRDs, hack/crds.txt lists %d", len(all), len(sources))
	}
	for _, c := range all {
		if c.Spec.Group == "" || len(c.Spec.Versions) == 0 {
			t.Errorf("%s decoded empty", c.Name)
		}
	}
}
