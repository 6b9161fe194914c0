package imagepin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/images"
	"github.com/containerd/containerd/platforms"
	"github.com/containerd/containerd/remotes/docker"
	dockerconfig "github.com/containerd/containerd/remotes/docker/config"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/mco-dev/mco/internal/containerdhosts"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Sizer tells the compressed size of an image's layers before it is pulled, for the disk guard.
type Sizer interface {
	// Layers are the image's layers for this node's platform: digest → compressed size; creds
	// are the node's pull secret's.
	Layers(ctx context.Context, ref string, creds *Credentials) (map[string]int64, error)
}

// maxManifest bounds a manifest read from a registry.
const maxManifest = 4 << 20

// ContainerdSizer reads manifests the way the node's containerd resolves them: its registry
// hosts directory (containerdhosts.CertsDir in Root: mirrors, plain-HTTP and certificate
// settings, the files mco writes from the cluster's registries configuration), with the pull
// secret's credentials. A registry's directory is read through Root (no link followed: one
// planted there could otherwise hand any file of the host to the TOML reader, whose errors end
// up in the node's report) into a private copy that containerd's own reader then reads.
type ContainerdSizer struct {
	Root *noderoot.Root
}

// hostDir copies the node's hosts directory of host (or, as containerd falls back, _default)
// into a directory under tmp; "" with containerd's NotFound when the node has neither.
func (s ContainerdSizer) hostDir(tmp, host string) (string, error) {
	for _, name := range []string{host, "_default"} {
		dir := path.Join(containerdhosts.CertsDir, name)
		entries, err := s.Root.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", dir, err)
		}
		if entries == nil {
			continue
		}
		copyDir, err := os.MkdirTemp(tmp, "host-")
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			data, err := s.Root.ReadFile(path.Join(dir, e.Name()))
			if err != nil {
				return "", fmt.Errorf("reading %s (mco reads only regular files there, never a link): %w", path.Join(dir, e.Name()), err)
			}
			if err := os.WriteFile(filepath.Join(copyDir, e.Name()), data, 0o600); err != nil {
				return "", err
			}
		}
		return copyDir, nil
	}
	return "", errdefs.ErrNotFound
}

// Layers tries the registry's hosts in containerd's order (its mirrors, then the registry), one
// at a time so that each host's answer is known: containerd's resolver goes on to the next host
// on any error and reports only the first, so a registry's "not found" behind a mirror that
// failed for another reason would be lost.
func (s ContainerdSizer) Layers(ctx context.Context, ref string, creds *Credentials) (map[string]int64, error) {
	tmp, err := os.MkdirTemp("", "mco-registry-hosts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	hostsOf := dockerconfig.ConfigureHosts(ctx, dockerconfig.HostOptions{
		HostDir:     func(host string) (string, error) { return s.hostDir(tmp, host) },
		Credentials: creds.ForHost,
	})
	registry, _, _ := strings.Cut(ref, "/")
	hosts, err := hostsOf(registry)
	if err != nil {
		return nil, fmt.Errorf("reading the registry hosts of %s in %s: %w", registry, containerdhosts.CertsDir, err)
	}
	var errs []error
	var notFound []string
	for _, h := range hosts {
		layers, err := layersFrom(ctx, h, ref)
		if err == nil {
			return layers, nil
		}
		where := h.Scheme + "://" + h.Host
		if errdefs.IsNotFound(err) {
			notFound = append(notFound, where)
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %w", where, err))
	}
	if len(notFound) > 0 {
		// The registry's own answer; another host's failure to answer at all says nothing more.
		return nil, fmt.Errorf("not found in the registry (%s has no such manifest)", strings.Join(notFound, ", "))
	}
	return nil, registryError(errors.Join(errs...))
}

// layersFrom reads ref's layers from one registry host.
func layersFrom(ctx context.Context, host docker.RegistryHost, ref string) (map[string]int64, error) {
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: func(string) ([]docker.RegistryHost, error) {
		return []docker.RegistryHost{host}, nil
	}})
	name, desc, err := resolver.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	fetcher, err := resolver.Fetcher(ctx, name)
	if err != nil {
		return nil, err
	}
	read := func(d ocispec.Descriptor) ([]byte, error) {
		rc, err := fetcher.Fetch(ctx, d)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(io.LimitReader(rc, maxManifest))
	}
	return layersOf(desc, read, platforms.Default())
}

// layersOf follows an index to this platform's manifest and sums nothing: it returns each layer
// once with its size.
func layersOf(desc ocispec.Descriptor, read func(ocispec.Descriptor) ([]byte, error), platform platforms.MatchComparer) (map[string]int64, error) {
	for range 3 { // an index of indexes is allowed, but not without end
		data, err := read(desc)
		if err != nil {
			return nil, err
		}
		switch desc.MediaType {
		case images.MediaTypeDockerSchema2ManifestList, ocispec.MediaTypeImageIndex:
			var idx ocispec.Index
			if err := json.Unmarshal(data, &idx); err != nil {
				return nil, fmt.Errorf("reading the image index: %w", err)
			}
			var best *ocispec.Descriptor
			for i := range idx.Manifests {
				m := &idx.Manifests[i]
				if m.Platform == nil || !platform.Match(*m.Platform) {
					continue
				}
				if best == nil || platform.Less(*m.Platform, *best.Platform) {
					best = m
				}
			}
			if best == nil {
				return nil, fmt.Errorf("the image has no manifest for this node's platform (%s)", platforms.DefaultString())
			}
			desc = *best
		case images.MediaTypeDockerSchema2Manifest, ocispec.MediaTypeImageManifest:
			var m ocispec.Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("reading the image manifest: %w", err)
			}
			layers := map[string]int64{}
			for _, l := range m.Layers {
				layers[l.Digest.String()] = l.Size
			}
			return layers, nil
		default:
			return nil, fmt.Errorf("the registry answered with a %q, not an image manifest or index", desc.MediaType)
		}
	}
	return nil, errors.New("the image's indexes nest too deep")
}

// registryError says what a registry's refusal means for the admin.
func registryError(err error) error {
	switch {
	case strings.Contains(err.Error(), "401 Unauthorized"), strings.Contains(err.Error(), "403 Forbidden"):
		return fmt.Errorf("the registry refused the node's credentials (%v)", err)
	}
	return err
}

// PodmanSizer asks podman on the node, as OpenShift's agent does on CRI-O nodes
// (`podman manifest inspect --authfile <pull secret> <image>`: podman reads the node's
// registries.conf, so mirrors count as they do for CRI-O).
type PodmanSizer struct {
	Root     string
	Run      systemd.Runner
	AuthFile string
}

// Command is the command line that inspects ref.
func (s PodmanSizer) Command(ref string) []string {
	return []string{"podman", "manifest", "--log-level", "error", "inspect", "--authfile", s.AuthFile, ref}
}

func (s PodmanSizer) Layers(ctx context.Context, ref string, _ *Credentials) (map[string]int64, error) {
	out, err := chrootRun(ctx, s.Root, s.Run, s.Command(ref))
	if err != nil {
		if strings.Contains(string(out), "manifest unknown") {
			return nil, fmt.Errorf("not found in the registry (%s)", strings.TrimSpace(string(out)))
		}
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(s.Command(ref), " "), err, strings.TrimSpace(string(out)))
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("reading podman's manifest of %s: %w", ref, err)
	}
	layers := map[string]int64{}
	for _, l := range m.Layers {
		layers[l.Digest.String()] = l.Size
	}
	return layers, nil
}
