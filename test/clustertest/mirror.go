package clustertest

import (
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/testenv"
)

// ImageMirror is a registry on this host's address for the dev cluster's machines (their
// containerd reaches it through their network card; the address is the host's own, on the
// cluster's bridge, so nothing outside this host can), answering those machines only, holding
// one image the test built, and counting the manifest requests it answers for it.
type ImageMirror struct {
	// Host is host:port of the registry.
	Host string
	// Repo is the repository path the (first) image is under, Digest its manifest's digest;
	// Digests has every image's, by repository.
	Repo, Digest string
	Digests      map[string]string
	manifestGets atomic.Int32
	mu           sync.Mutex
	blobGets     map[string]int // client address → blob reads
}

// ManifestGets counts the requests for the image's manifest: proof that a pull went here.
func (m *ImageMirror) ManifestGets() int { return int(m.manifestGets.Load()) }

// BlobGets counts the blob reads (layers and configs, of any of its images) each client address
// made: a pull reads each blob of its image once, where resolving or sizing an image reads only
// manifests.
func (m *ImageMirror) BlobGets() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.blobGets)
}

// Ref is repo's image by digest.
func (m *ImageMirror) Ref(repo string) string { return m.Host + "/" + repo + "@" + m.Digests[repo] }

// StartImageMirror serves a registry holding, under each of repos, the pod sandbox program (make
// tools' pause) as an image of its own: a config label naming the repository makes its digest
// differ from the pause image every machine has preloaded, and from the others, so containerd
// cannot find it anywhere but in a registry.
func StartImageMirror(t testing.TB, cl *Cluster, repos ...string) *ImageMirror {
	t.Helper()
	m := &ImageMirror{Repo: repos[0], Digests: map[string]string{}, blobGets: map[string]int{}}
	repo := repos[0]
	reg := registry.New()
	st, err := devcluster.LoadState(cl.Dir)
	if err != nil {
		t.Fatal(err)
	}
	layout := st.Network()
	// It has no credentials, so it answers by address: the test's own push from this host until
	// the image is in, then reads only, and only from the cluster's machines (their node
	// addresses: a pod, from the pod range, is refused).
	var sealed atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := netip.ParseAddrPort(r.RemoteAddr)
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case err != nil:
			http.Error(w, "no client address", http.StatusForbidden)
			return
		case !read && (sealed.Load() || client.Addr() != layout.HostAddr()):
			http.Error(w, "the test mirror takes no pushes", http.StatusForbidden)
			return
		case read && sealed.Load() && (!layout.NodeNet.Contains(client.Addr()) || client.Addr() == layout.HostAddr()):
			http.Error(w, "the test mirror serves the cluster's machines only", http.StatusForbidden)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v2/"+repo+"/manifests/") && read {
			m.manifestGets.Add(1)
		}
		if strings.Contains(r.URL.Path, "/blobs/sha256:") && r.Method == http.MethodGet && sealed.Load() {
			m.mu.Lock()
			m.blobGets[client.Addr().String()]++
			m.mu.Unlock()
		}
		reg.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(layout.HostAddr().String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
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
	var ref name.Reference
	var img v1.Image
	for i, r := range repos {
		c := cfg.DeepCopy()
		c.Config.Labels = map[string]string{"dev.mco.e2e": "served-by-the-mirror-only"}
		if i > 0 {
			c.Config.Labels["dev.mco.e2e.repo"] = r
		}
		if img, err = mutate.ConfigFile(base, c); err != nil {
			t.Fatal(err)
		}
		if ref, err = name.ParseReference(m.Host+"/"+r+":e2e", name.Insecure); err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatalf("pushing the test image to the mirror: %v", err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		m.Digests[r] = d.String()
	}
	m.Digest = m.Digests[repo]
	sealed.Store(true)
	m.manifestGets.Store(0) // the push's own requests do not count
	// Sealed: this host may no longer push, nor read (it is not one of the machines).
	if err := remote.Write(ref, img); err == nil {
		t.Fatal("the sealed mirror took a push")
	}
	if _, err := remote.Head(ref); err == nil {
		t.Fatal("the sealed mirror answered a client that is not one of the cluster's machines")
	}
	return m
}
