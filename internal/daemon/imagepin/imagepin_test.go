package imagepin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/pinnedimages"
)

const (
	imgA = "reg.example/a@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	imgB = "reg.example/b@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	imgC = "reg.example/c@sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	imgD = "reg.example/d@sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
)

// TestContainerdCommands holds the pinning to its exact command lines: containerd's CRI reports
// an image pinned by this label, and an empty value removes it.
func TestContainerdCommands(t *testing.T) {
	got := Containerd{}.Commands(PinChange{Want: []string{imgA, imgB, imgD}, Had: []string{imgB, imgC}, Pinned: map[string]bool{imgD: true}})
	want := [][]string{
		{"ctr", "--namespace", "k8s.io", "images", "label", imgA, "io.cri-containerd.pinned=pinned"},
		{"ctr", "--namespace", "k8s.io", "images", "label", imgB, "io.cri-containerd.pinned=pinned"},
		{"ctr", "--namespace", "k8s.io", "images", "label", imgC, "io.cri-containerd.pinned="},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commands:\n%v\nwant\n%v", got, want)
	}
	var ran [][]string
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		ran = append(ran, append([]string{name}, args...))
		if strings.Contains(strings.Join(args, " "), imgC) {
			return []byte("ctr: image \"" + imgC + "\": not found"), errors.New("exit status 1")
		}
		return nil, nil
	}
	if err := (Containerd{Root: "/rootfs", Run: run}).Pin(context.Background(), PinChange{Want: []string{imgA}, Had: []string{imgC}}); err != nil {
		t.Errorf("unpinning an image the kubelet already removed: %v", err)
	}
	if len(ran) != 2 || ran[0][0] != "chroot" || ran[0][1] != "/rootfs" || ran[0][2] != "ctr" {
		t.Errorf("ran %v, want ctr chrooted into the node's root", ran)
	}
	failing := func(context.Context, string, ...string) ([]byte, error) {
		return []byte("boom"), errors.New("exit status 1")
	}
	if err := (Containerd{Run: failing}).Pin(context.Background(), PinChange{Want: []string{imgA}}); err == nil || !strings.Contains(err.Error(), imgA) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a failed pin: %v, want the image and ctr's words", err)
	}
}

type reloads struct {
	systemd.Manager
	mu    sync.Mutex
	units []string
}

func (r *reloads) Reload(_ context.Context, unit string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.units = append(r.units, unit)
	return nil
}

// TestCRIOPin writes OpenShift's drop-in, reloads CRI-O only when it changed, and removes it
// (with a reload) when nothing is pinned.
func TestCRIOPin(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc/crio/crio.conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := noderoot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	sd := &reloads{}
	c := CRIO{Root: root, Systemd: sd}
	ctx := context.Background()
	for range 2 {
		if err := c.Pin(ctx, PinChange{Want: []string{imgA}, Pinned: map[string]bool{imgA: true}}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, pinnedimages.CRIOPinnedImagesDropIn))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[crio]\n  [crio.image]\n    pinned_images = [\"" + imgA + "\"]\n"; string(data) != want {
		t.Errorf("drop-in %q, want %q", data, want)
	}
	if !reflect.DeepEqual(sd.units, []string{CRIOUnit}) {
		t.Errorf("reloads %v, want one of %s (the second pass changed nothing)", sd.units, CRIOUnit)
	}
	if err := c.Pin(ctx, PinChange{Had: []string{imgA}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, pinnedimages.CRIOPinnedImagesDropIn)); !os.IsNotExist(err) {
		t.Errorf("the drop-in is still there with nothing pinned: %v", err)
	}
	if len(sd.units) != 2 {
		t.Errorf("reloads %v, want a second for the removal", sd.units)
	}
}

func TestPodmanCommand(t *testing.T) {
	got := PodmanSizer{AuthFile: PullSecretPath}.Command(imgA)
	want := []string{"podman", "manifest", "--log-level", "error", "inspect", "--authfile", "/var/lib/kubelet/config.json", imgA}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want OpenShift's %v", got, want)
	}
}

func TestCredentials(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	data, _ := json.Marshal(map[string]any{"auths": map[string]any{
		"reg.example":                 map[string]string{"auth": enc("u1:p1")},
		"reg.example/team":            map[string]string{"auth": enc("u2:p:2")},
		"https://index.docker.io/v1/": map[string]string{"username": "d", "password": "dp"},
	}})
	c, err := ParseCredentials(data)
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"reg.example/a@sha256:x":         "u1:p1",
		"reg.example/team/app@sha256:x":  "u2:p:2",
		"reg.example/teamx/app@sha256:x": "u1:p1",
		"docker.io/library/b@sha256:x":   "d:dp",
		"other.example/c@sha256:x":       "",
	} {
		got := ""
		if a := c.Auth(ref); a != nil {
			got = a.Username + ":" + a.Password
		}
		if got != want {
			t.Errorf("%s: %q, want %q", ref, got, want)
		}
	}
	if u, p, _ := c.ForHost("registry-1.docker.io"); u != "d" || p != "dp" {
		t.Errorf("docker.io's host: %s %s", u, p)
	}
	if _, err := ParseCredentials([]byte(`{"auths":{"x":{"auth":"bm9jb2xvbg=="}}}`)); err == nil || !strings.Contains(err.Error(), "user:password") {
		t.Errorf("an auth without a colon: %v", err)
	}
	if c, err := ParseCredentials(nil); err != nil || c.Auth(imgA) != nil {
		t.Errorf("no pull secret: %v", err)
	}
}

func TestLayersOf(t *testing.T) {
	manifest := ocispec.Manifest{Layers: []ocispec.Descriptor{{Digest: "sha256:l1", Size: 10}, {Digest: "sha256:l2", Size: 20}}}
	other := ocispec.Manifest{Layers: []ocispec.Descriptor{{Digest: "sha256:arm", Size: 99}}}
	index := ocispec.Index{Manifests: []ocispec.Descriptor{
		{MediaType: ocispec.MediaTypeImageManifest, Digest: "sha256:arm64", Platform: &ocispec.Platform{OS: "linux", Architecture: "arm64"}},
		{MediaType: ocispec.MediaTypeImageManifest, Digest: "sha256:amd64", Platform: &ocispec.Platform{OS: "linux", Architecture: "amd64"}},
	}}
	blobs := map[string]any{"sha256:index": index, "sha256:amd64": manifest, "sha256:arm64": other}
	read := func(d ocispec.Descriptor) ([]byte, error) { return json.Marshal(blobs[d.Digest.String()]) }
	got, err := layersOf(ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: "sha256:index"}, read, platforms.Only(ocispec.Platform{OS: "linux", Architecture: "amd64"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"sha256:l1": 10, "sha256:l2": 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("layers %v, want %v", got, want)
	}
	if _, err := layersOf(ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: "sha256:index"}, read, platforms.Only(ocispec.Platform{OS: "linux", Architecture: "s390x"})); err == nil || !strings.Contains(err.Error(), "no manifest for this node's platform") {
		t.Errorf("no manifest for the platform: %v", err)
	}
}

// fakeRuntime is a container runtime's image store.
type fakeRuntime struct {
	mu       sync.Mutex
	name     string
	version  string
	have     map[string]bool
	pinned   map[string]bool
	pulls    map[string]int
	failPull map[string]string
	labels   int // pins asked of an image not yet pinned
}

func (f *fakeRuntime) Version(context.Context) (string, string, error) { return f.name, f.version, nil }
func (f *fakeRuntime) Status(_ context.Context, ref string) (bool, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.have[ref], f.pinned[ref], nil
}
func (f *fakeRuntime) Pull(_ context.Context, ref string, _ *runtimeapi.AuthConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pulls[ref]++
	if msg := f.failPull[ref]; msg != "" {
		return errors.New(msg)
	}
	f.have[ref] = true
	return nil
}

// newRuntime is a containerd at version holding images, none pinned.
func newRuntime(version string, images ...string) *fakeRuntime {
	rt := &fakeRuntime{name: "containerd", version: version, have: map[string]bool{}, pinned: map[string]bool{}, pulls: map[string]int{}}
	for _, i := range images {
		rt.have[i] = true
	}
	return rt
}

// labeller pins in the fake runtime, as containerd's labels do.
type labeller struct{ rt *fakeRuntime }

func (l labeller) Pin(_ context.Context, c PinChange) error {
	l.rt.mu.Lock()
	defer l.rt.mu.Unlock()
	for _, h := range c.Had {
		l.rt.pinned[h] = false
	}
	for _, w := range c.Want {
		if !c.Pinned[w] {
			l.rt.labels++
		}
		l.rt.pinned[w] = true
	}
	return nil
}

type sizes map[string]map[string]int64

func (s sizes) Layers(_ context.Context, ref string, _ *Credentials) (map[string]int64, error) {
	if l, ok := s[ref]; ok {
		return l, nil
	}
	return nil, errors.New("not found in the registry (manifest unknown)")
}

func TestManagerRun(t *testing.T) {
	gi := func(n int64) resource.Quantity { return *resource.NewQuantity(n<<30, resource.BinarySI) }
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceEphemeralStorage: gi(40)}}}
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/worker": ""}},
			PinnedImageSets: []mcfgv1.PinnedImageSetRef{{Name: "good"}, {Name: "bad"}}}}
	set := func(name string, gen int64, imgs ...string) mcfgv1.PinnedImageSet {
		s := mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: gen}}
		for _, i := range imgs {
			s.Spec.PinnedImages = append(s.Spec.PinnedImages, mcfgv1.PinnedImageRef{Name: mcfgv1.ImageDigestFormat(i)})
		}
		return s
	}
	newManager := func(t *testing.T, rt *fakeRuntime, minFree resource.Quantity) *Manager {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "etc/machine-config-daemon"), 0o755); err != nil {
			t.Fatal(err)
		}
		root, err := noderoot.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		return &Manager{Node: func() *corev1.Node { return node }, Runtime: rt, Root: root, Pinner: labeller{rt},
			Sizer: sizes{imgA: {"sha256:1": 1 << 30}, imgB: {"sha256:1": 1 << 30, "sha256:2": 1 << 30}},
			Creds: func() (*Credentials, error) { return ParseCredentials(nil) }, MinFree: minFree, Log: slog.Default(), Pause: 1}
	}
	ctx := context.Background()
	pools := []*mcfgv1.MachineConfigPool{pool}

	t.Run("a missing image fails its set alone; the rest is pulled once and pinned", func(t *testing.T) {
		rt := newRuntime("v2.4.2")
		m := newManager(t, rt, gi(16))
		progress := 0
		m.Progress = func(Pass) { progress++ }
		sets := []mcfgv1.PinnedImageSet{set("good", 1, imgA, imgB), set("bad", 4, imgB, imgC)}
		p, err := m.Run(ctx, pools, sets)
		if err != nil {
			t.Fatal(err)
		}
		if r := p.Results["good"]; !r.Pinned || len(r.Failed) > 0 {
			t.Errorf("good: %+v", r)
		}
		if r := p.Results["bad"]; r.Pinned || len(r.Failed) != 1 || r.Failed[0].Image != imgC || !strings.Contains(r.Failed[0].Reason, "not found") {
			t.Errorf("bad: %+v, want only %s failed, not found", r, imgC)
		}
		if !rt.pinned[imgA] || !rt.pinned[imgB] || rt.pinned[imgC] {
			t.Errorf("pinned %v", rt.pinned)
		}
		if rt.pulls[imgA] != 1 || rt.pulls[imgB] != 1 || rt.pulls[imgC] != 0 {
			t.Errorf("pulls %v, want each present image pulled once, the missing one never", rt.pulls)
		}
		if progress != 1 {
			t.Errorf("%d progress reports, want 1 for a pass that pulls", progress)
		}
		// The same again (the periodic pass): nothing pulled, pinned again or reported.
		labels := rt.labels
		if _, err := m.Run(ctx, pools, sets); err != nil {
			t.Fatal(err)
		}
		if rt.labels != labels || rt.pulls[imgA] != 1 || progress != 1 {
			t.Errorf("a pass with everything in place: %d more pins, pulls %v, %d progress reports", rt.labels-labels, rt.pulls, progress)
		}
		// The set loses an image: it is unpinned; nothing is pulled again.
		p, err = m.Run(ctx, pools, []mcfgv1.PinnedImageSet{set("good", 2, imgA)})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Results["good"].Pinned || rt.pinned[imgB] || !rt.pinned[imgA] || rt.pulls[imgA] != 1 {
			t.Errorf("after dropping %s: %+v, pinned %v, pulls %v", imgB, p.Results, rt.pinned, rt.pulls)
		}
		// mco is removed: Release unpins what the record names, and removes the record.
		if n, err := m.Release(ctx); err != nil || n != 1 || rt.pinned[imgA] {
			t.Errorf("Release: %d, %v; pinned %v", n, err, rt.pinned)
		}
		if n, err := m.Release(ctx); err != nil || n != 0 {
			t.Errorf("a second Release: %d, %v, want nothing left to unpin", n, err)
		}
		if _, err := m.Run(ctx, pools, []mcfgv1.PinnedImageSet{set("good", 2, imgA)}); err != nil || !rt.pinned[imgA] {
			t.Fatalf("pinned again: %v %v", err, rt.pinned)
		}
		// The pool loses its sets: everything mco pinned is unpinned.
		if _, err := m.Run(ctx, []*mcfgv1.MachineConfigPool{{ObjectMeta: pool.ObjectMeta, Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: pool.Spec.NodeSelector}}}, nil); err != nil {
			t.Fatal(err)
		}
		if rt.pinned[imgA] {
			t.Errorf("%s still pinned with no set", imgA)
		}
	})

	t.Run("the disk guard refuses before any pull", func(t *testing.T) {
		rt := newRuntime("v2.4.2")
		m := newManager(t, rt, gi(39)) // 1Gi of room; imgB needs 2Gi compressed, 4Gi unpacked
		p, _ := m.Run(ctx, pools, []mcfgv1.PinnedImageSet{set("good", 1, imgB)})
		if r := p.Results["good"]; r.Pinned || !strings.Contains(r.SetError, "not enough storage") {
			t.Errorf("%+v", r)
		}
		if len(rt.pulls) != 0 {
			t.Errorf("pulled %v", rt.pulls)
		}
	})

	t.Run("a containerd that cannot pin is refused, naming its version", func(t *testing.T) {
		rt := newRuntime("1.6.20~ds1")
		m := newManager(t, rt, gi(1))
		p, _ := m.Run(ctx, pools, []mcfgv1.PinnedImageSet{set("good", 1, imgA)})
		if r := p.Results["good"]; r.Pinned || !strings.Contains(r.SetError, "containerd 1.6.20~ds1") {
			t.Errorf("%+v", r)
		}
		if len(rt.pulls) != 0 {
			t.Errorf("pulled %v on a runtime that cannot pin", rt.pulls)
		}
	})

	t.Run("an image the runtime does not report pinned fails its set", func(t *testing.T) {
		rt := newRuntime("v2.4.2", imgA)
		m := newManager(t, rt, gi(1))
		m.Pinner = PinnerFunc(func(context.Context, PinChange) error { return nil }) // pins nothing
		m.VerifyTimeout = time.Second
		p, _ := m.Run(ctx, pools, []mcfgv1.PinnedImageSet{set("good", 1, imgA)})
		if r := p.Results["good"]; r.Pinned || len(r.Failed) != 1 || !strings.Contains(r.Failed[0].Reason, "does not report it pinned") {
			t.Errorf("%+v", r)
		}
	})
}

// TestHostDirLinks: a registry's hosts directory is copied file by file through the node root;
// a link planted in it is refused, never followed (its target would be read as TOML and end up
// in an error on the node's report).
func TestHostDirLinks(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "etc/containerd/certs.d")
	for _, d := range []string{"reg.example:5000", "_default", "planted"} {
		if err := os.MkdirAll(filepath.Join(certs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(certs, "reg.example:5000/hosts.toml"), []byte("server = \"http://reg.example:5000\"\n"), 0o644)
	_ = os.WriteFile(filepath.Join(certs, "_default/hosts.toml"), []byte("# default\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "secret"), []byte("root:x:0:0\n"), 0o600)
	if err := os.Symlink("/secret", filepath.Join(certs, "planted/hosts.toml")); err != nil {
		t.Fatal(err)
	}
	root, err := noderoot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	s := ContainerdSizer{Root: root}
	tmp := t.TempDir()
	got, err := s.hostDir(tmp, "reg.example:5000")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(got, "hosts.toml")); string(data) != "server = \"http://reg.example:5000\"\n" {
		t.Errorf("copied hosts.toml = %q", data)
	}
	got, err = s.hostDir(tmp, "other.example")
	if data, _ := os.ReadFile(filepath.Join(got, "hosts.toml")); err != nil || string(data) != "# default\n" {
		t.Errorf("fallback to _default: %q, %v", data, err)
	}
	if _, err := s.hostDir(tmp, "planted"); err == nil || !strings.Contains(err.Error(), "never a link") {
		t.Errorf("a planted link: %v, want it refused", err)
	}
	if _, err := s.Layers(context.Background(), "planted/x@sha256:1", nil); err == nil || strings.Contains(err.Error(), "root:x") {
		t.Errorf("Layers through a planted link: %v", err)
	}
}
