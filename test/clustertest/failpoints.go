package clustertest

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/testenv"
)

// agentInImage is the binary a dev cluster's agent pods run (devcluster.AgentProcess).
const agentInImage = "usr/bin/mco-node"

// RequireFailpoints fails the test at once unless the agent its clusters' pods run,
// /usr/bin/mco-node in bin/mco-image.tar, was built with the failpoints (failpoint.BuildTag),
// which the test arms. An agent without them ignores every arming: the test would wait minutes
// for a pause that never comes, or, in test/chaos, pass without one kill inside a transaction.
// `make test` and `make chaos` build bin/mco-node and the image with them; `make build`,
// `make image` and `make demo` without.
func RequireFailpoints(t testing.TB) {
	t.Helper()
	archive := filepath.Join(filepath.Dir(testenv.RequireMCO(t)), "mco-image.tar")
	tags, err := imageBuildTags(archive, agentInImage)
	if err != nil {
		t.Fatalf("this test arms the agent's failpoints, and cannot tell whether the agent of %s has them: %v (run `make test`, or `make chaos`)", archive, err)
	}
	if !slices.Contains(tags, failpoint.BuildTag) {
		t.Fatalf("this test arms the agent's failpoints, but /%s in %s was built without them (-tags=%s): "+
			"`make test` and `make chaos` build bin/mco-node and the image with -tags nodeagent,%s (Makefile's NODE_TAGS); `make build image` does not",
			agentInImage, archive, strings.Join(tags, ","), failpoint.BuildTag)
	}
}

// imageBuildTags returns the build tags (go version -m's -tags) of the Go binary file in the
// image archive, the last layer holding it: the image's own copy, which may be older than
// bin/ when `make build` ran since `make image`.
func imageBuildTags(archive, file string) ([]string, error) {
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for i := len(layers) - 1; i >= 0; i-- {
		data, err := fileInLayer(layers[i].Uncompressed, file)
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("/%s: %w", file, err)
		}
		for _, s := range info.Settings {
			if s.Key == "-tags" {
				return strings.Split(s.Value, ","), nil
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("no /%s in the image", file)
}

// fileInLayer returns the contents of file in a layer, or nil when the layer lacks it.
func fileInLayer(open func() (io.ReadCloser, error), file string) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if path.Clean(strings.TrimPrefix(h.Name, "/")) == file && h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}
