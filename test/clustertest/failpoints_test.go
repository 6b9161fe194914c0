package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestImageBuildTags reads the build tags of the agent in an image archive written as `make
// image` writes it, with and without the failpoints: what RequireFailpoints decides on.
func TestImageBuildTags(t *testing.T) {
	for _, tags := range []string{"nodeagent," + failpoint.BuildTag, "nodeagent"} {
		bin := t.TempDir()
		// Any main package of the module shows the tags it was built with; this one links fast.
		build := exec.Command("go", "build", "-trimpath", "-tags", tags, "-o", filepath.Join(bin, "mco-node"), "./hack/layering")
		build.Dir, build.Env = testenv.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %s: %v\n%s", tags, err, out)
		}
		for _, other := range image.Binaries {
			if other == "mco-node" {
				continue
			}
			if err := os.WriteFile(filepath.Join(bin, other), []byte("not the agent"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		img, err := image.Build(image.Inputs{Base: image.Tree{}, BinDir: bin, Version: "test", Commit: "test", Arch: runtime.GOARCH, Epoch: time.Unix(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(bin, "mco-image.tar")
		if err := image.WriteArchive(archive, img, "test"); err != nil {
			t.Fatal(err)
		}
		got, err := imageBuildTags(archive, agentInImage)
		if err != nil || !slices.Equal(got, strings.Split(tags, ",")) {
			t.Errorf("the agent built with -tags %s: read %v, %v", tags, got, err)
		}
	}
	if _, err := imageBuildTags(filepath.Join(t.TempDir(), "missing.tar"), agentInImage); err == nil {
		t.Error("no error for a missing archive")
	}
}
