package e2e

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/testenv"
)

// imageMirror is a registry on this host's loopback (the dev machines share its network
// namespace, so their containerd reaches it; nothing else can) holding one image the test
// built, and counting the manifest requests it answers for it.
type imageMirror struct {
	// Host is host:port of the registry.
	Host string
	// Repo is the repository path the image is under, Digest its manifest's digest.
	Repo, Digest string
	manifestGets atomic.Int32
}

// ManifestGets counts the requests for the image's manifest: proof that a pull went here.
func (m *imageMirror) ManifestGets() int { return int(m.manifestGets.Load()) }

// startImageMirror serves a registry holding, under repo, the pod sandbox program (make tools'
// pause) as an image of its own: a config label makes its digest differ from the pause image
// every machine has preloaded, so containerd cannot find it anywhere but in a registry.
func startImageMirror(t *testing.T, repo string) *imageMirror {
	t.Helper()
	m := &imageMirror{Repo: repo}
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/"+repo+"/manifests/") && r.Method != http.MethodPut {
			m.manifestGets.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m.Host = strings.TrimPrefix(srv.URL, "http://")
	base, err := image.PauseImage(filepath.Join(testenv.ToolsDir(), "pause"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := base.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = map[string]string{"dev.mco.e2e": "served-by-the-mirror-only"}
	img, err := mutate.ConfigFile(base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(m.Host+"/"+repo+":e2e", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing the test image to the mirror: %v", err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	m.Digest = d.String()
	m.manifestGets.Store(0) // the push's own requests do not count
	return m
}
