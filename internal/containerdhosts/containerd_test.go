package containerdhosts

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/containerd/containerd/remotes/docker"
	"github.com/containerd/containerd/remotes/docker/config"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/types"
)

// These tests read the files with containerd's own code: remotes/docker/config and the
// resolver of containerd v1.6.20, Debian bookworm's containerd, a test-only dependency (the
// mco binary does not link it). Its CRI plugin hands config_path's directories to exactly
// this ConfigureHosts (pkg/cri/server/image_pull.go, registryHosts).

// containerdHosts writes files below a temporary directory standing for CertsDir and returns
// containerd's reading of it. update, if not nil, amends each HTTP client containerd makes.
func containerdHosts(t *testing.T, files []File, update config.UpdateClientFunc) docker.RegistryHosts {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		rel, ok := strings.CutPrefix(f.Path, CertsDir+"/")
		if !ok {
			t.Fatalf("%s is not below %s", f.Path, CertsDir)
		}
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
			t.Fatal(err)
		}
	}
	return config.ConfigureHosts(context.Background(), config.HostOptions{HostDir: config.HostDirFromRoot(root), UpdateClient: update})
}

// host is a docker.RegistryHost as far as the files decide it.
type host struct {
	url        string // scheme://host + API root path
	caps       docker.HostCapabilities
	skipVerify bool
}

const (
	pull    = docker.HostCapabilityPull
	tags    = docker.HostCapabilityPull | docker.HostCapabilityResolve
	allCaps = docker.HostCapabilityPull | docker.HostCapabilityResolve | docker.HostCapabilityPush
)

func TestContainerdReadsTheFiles(t *testing.T) {
	generated, err := FromRegistriesConf([]byte(generatedMappable(t)))
	if err != nil {
		t.Fatal(err)
	}
	dockerHub, err := FromRegistriesConf([]byte(`[[registry]]
  location = "docker.io"
  [[registry.mirror]]
    location = "mirror.gcr.io"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "registry.example.com:5000/ns"
  [[registry.mirror]]
    location = "mirror.example.com/ns"
    pull-from-mirror = "digest-only"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		files    []File
		registry string
		want     []host
	}{
		{generated, "quay.io", []host{
			{url: "https://mirror.example.com/v2", caps: pull},
			{url: "https://cache.example.com:5000/v2/quay", caps: pull},
			{url: "https://quay.io/v2", caps: allCaps}}},
		{generated, "registry-a.example.com", []host{
			{url: "https://insecure.example.com/v2/registry-a", caps: pull, skipVerify: true},
			{url: "http://insecure.example.com/v2/registry-a", caps: pull},
			{url: "https://tags.example.com/v2", caps: tags},
			{url: "https://registry-a.example.com/v2", caps: allCaps}}},
		{generated, "insecure.example.com", []host{
			{url: "https://insecure.example.com/v2", caps: allCaps, skipVerify: true},
			{url: "http://insecure.example.com/v2", caps: allCaps}}},
		// No file: containerd's own default.
		{generated, "other.example.com", []host{{url: "https://other.example.com/v2", caps: allCaps}}},
		{dockerHub, "docker.io", []host{
			{url: "https://mirror.gcr.io/v2", caps: pull},
			{url: "https://registry-1.docker.io/v2", caps: allCaps}}},
		{dockerHub, "registry.example.com:5000", []host{
			{url: "https://mirror.example.com/v2", caps: pull},
			{url: "https://registry.example.com:5000/v2", caps: allCaps}}},
	} {
		t.Run(tc.registry, func(t *testing.T) {
			hosts, err := containerdHosts(t, tc.files, nil)(tc.registry)
			if err != nil {
				t.Fatal(err)
			}
			var got []host
			for _, h := range hosts {
				tr, ok := h.Client.Transport.(*http.Transport)
				if !ok {
					t.Fatalf("%s: transport %T", h.Host, h.Client.Transport)
				}
				got = append(got, host{url: h.Scheme + "://" + h.Host + h.Path, caps: h.Capabilities,
					skipVerify: tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("containerd reads\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// TestContainerdPullsWhereCRIOWould compares, request by request, where containerd's resolver
// looks for a manifest with the files, and where containers/image (CRI-O) would with the
// registries.conf they come from: the same mirrors, in the same order, at the same repository
// paths, over the same schemes. The documented differences are listed per image as extra:
// containerd also tries a host's digest mirrors for its other repositories, and tag mirrors
// for digests (it cannot resolve at a host that cannot pull); by digest, so that what is
// pulled is the same.
func TestContainerdPullsWhereCRIOWould(t *testing.T) {
	conf := generatedMappable(t)
	files, err := FromRegistriesConf([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		image string
		extra []string
	}{
		{image: "quay.io/ns/app@" + digest},
		{image: "quay.io/ns/app:latest"},
		{image: "quay.io/other/app@" + digest, extra: []string{
			"https://mirror.example.com/v2/other/app/manifests/" + digest,
			"https://cache.example.com:5000/v2/quay/other/app/manifests/" + digest}},
		{image: "quay.io/other/app:latest"},
		{image: "registry-a.example.com/team/img@" + digest, extra: []string{"https://tags.example.com/v2/team/img/manifests/" + digest}},
		{image: "registry-a.example.com/team/img:v1"},
		{image: "insecure.example.com/x/y:1"},
		{image: "insecure.example.com/x/y@" + digest},
		{image: "docker.io/library/busybox:1.36"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			crio := crioRequests(t, conf, tc.image)
			got := containerdRequests(t, files, tc.image)
			for _, e := range tc.extra {
				if !slices.Contains(got, e) {
					t.Errorf("containerd does not ask %s", e)
				}
			}
			got = slices.DeleteFunc(got, func(r string) bool { return slices.Contains(tc.extra, r) })
			if !slices.Equal(got, crio) {
				t.Errorf("containerd asks (besides the extra)\n  %s\nCRI-O would ask\n  %s", strings.Join(got, "\n  "), strings.Join(crio, "\n  "))
			}
		})
	}
}

// containerdRequests is the manifest requests containerd's resolver makes, in order, for
// image, every registry answering 404: "scheme://host/path".
func containerdRequests(t *testing.T, files []File, image string) []string {
	t.Helper()
	var mu sync.Mutex
	var requests []string
	record := func(scheme string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				mu.Lock()
				requests = append(requests, scheme+"://"+r.Host+r.URL.Path)
				mu.Unlock()
			}
			http.NotFound(w, r)
		})
	}
	plain := httptest.NewServer(record("http"))
	defer plain.Close()
	secure := httptest.NewTLSServer(record("https"))
	defer secure.Close()
	// Every host name reaches the test servers: plain HTTP one, TLS the other. Certificates
	// are not verified here (TestContainerdReadsTheFiles checks skip_verify itself).
	route := func(c *http.Client) error {
		tr := c.Transport.(*http.Transport)
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, plain.Listener.Addr().String())
		}
		tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, secure.Listener.Addr().String())
			if err != nil {
				return nil, err
			}
			name, _, _ := net.SplitHostPort(addr)
			tc := tls.Client(conn, &tls.Config{ServerName: name, InsecureSkipVerify: true})
			return tc, tc.HandshakeContext(ctx)
		}
		return nil
	}
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: containerdHosts(t, files, route)})
	if _, _, err := resolver.Resolve(context.Background(), image); err == nil {
		t.Fatal("resolved with every registry answering 404")
	}
	return requests
}

// crioRequests is where containers/image would look for image's manifest with registries.conf
// conf. Insecure locations are tried over HTTPS, then HTTP (docker_client.go,
// detectPropertiesHelper).
func crioRequests(t *testing.T, conf, image string) (requests []string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "registries.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	defer sysregistriesv2.InvalidateCache()
	ctx := &types.SystemContext{SystemRegistriesConfPath: path, SystemRegistriesConfDirPath: filepath.Join(dir, "registries.conf.d")}
	ref, err := reference.ParseNamed(image)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := sysregistriesv2.FindRegistry(ctx, image)
	if err != nil {
		t.Fatal(err)
	}
	sources := []sysregistriesv2.PullSource{{Endpoint: sysregistriesv2.Endpoint{Location: reference.Domain(ref)}, Reference: ref}}
	if reg != nil {
		if sources, err = reg.PullSourcesFromReference(ref); err != nil {
			t.Fatal(err)
		}
	}
	object := strings.TrimPrefix(strings.TrimPrefix(image, ref.Name()), ":")
	object = strings.TrimPrefix(object, "@")
	for _, s := range sources {
		u := apiHost(reference.Domain(s.Reference)) + "/v2/" + reference.Path(s.Reference) + "/manifests/" + object
		requests = append(requests, "https://"+u)
		if s.Endpoint.Insecure {
			requests = append(requests, "http://"+u)
		}
	}
	return requests
}
