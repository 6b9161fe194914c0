package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// mcoImage is the image config/default names; the dev overlay sets its tag.
const mcoImage = "ghcr.io/mco-dev/mco"

// installOverlay is the kustomization mco dev applies, as README's "Install on a cluster" says:
// config/default (reached from installDir by the relative path base, as kustomize requires)
// with the image's tag and the install settings, nothing else. Every value is quoted: a tag is
// `git describe`'s, and one such as 28586e2 is a number to YAML.
func installOverlay(base, tag, serverHost, apiServerURL string, net devnet.Layout) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Written by mco dev up: config/default as a user installs it, with this cluster's image and settings.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %q
images:
- name: %s
  newTag: %q
configMapGenerator:
- name: mco-install
  namespace: openshift-machine-config-operator
  behavior: replace
  literals:
  - %q
  - %q
  - %q
`, base, mcoImage, tag, "serverHost="+serverHost, "apiServerURL="+apiServerURL, "podNetworks="+net.Pods.String())
	return b.String()
}

// Settings are what README's install steps ask an admin for, as a dev cluster has them: the
// image (preloaded into every machine's containerd, so named by its version tag), serverHost
// (api-int's port 22623), apiServerURL and podNetworks (the slot's pod range: the dev
// machines' Nodes have no spec.podCIDRs).
type Settings struct{ Image, ServerHost, APIServerURL, PodNetworks string }

// InstallSettings are the install settings of the dev cluster whose state is st.
func InstallSettings(st *State) (Settings, error) {
	tag, err := imageTag(st.ImageArchive)
	if err != nil {
		return Settings{}, err
	}
	return Settings{Image: mcoImage + ":" + tag, ServerHost: st.ServerHost(), APIServerURL: st.APIServerURL,
		PodNetworks: st.Network().Pods.String()}, nil
}

// imageTag is the version tag an image archive (make image's docker-archive) carries for
// mcoImage: a tag Kubernetes does not try to pull when it is present (`latest` it always pulls).
func imageTag(archive string) (string, error) {
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(archive) })
	if err != nil {
		return "", fmt.Errorf("%s: %w", archive, err)
	}
	for _, d := range m {
		for _, t := range d.RepoTags {
			if repo, tag, ok := strings.Cut(t, ":"); ok && repo == mcoImage && tag != "latest" {
				return tag, nil
			}
		}
	}
	return "", fmt.Errorf("%s holds no %s:<version> image (make image writes one)", archive, mcoImage)
}

// installMCO applies the dev overlay of manifests (config/default) with the server-side apply
// README's Install gives.
func installMCO(ctx context.Context, dir, kubectl, kubeconfig, manifests, archive, serverHost, apiServerURL string, net devnet.Layout) error {
	tag, err := imageTag(archive)
	if err != nil {
		return err
	}
	installDir := filepath.Join(dir, "install")
	if err := os.MkdirAll(installDir, 0o755); err != nil {
		return err
	}
	base, err := filepath.Rel(installDir, manifests)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(installDir, "kustomization.yaml"), []byte(installOverlay(base, tag, serverHost, apiServerURL, net)), 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--force-conflicts", "-k", installDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl apply --server-side -k %s: %w: %s", installDir, err, out)
	}
	return nil
}

// Upgrade installs the image archive over the running dev cluster in dir as an admin upgrades
// mco: the image where every node's container runtime finds it (what a push to the registry
// does on a real cluster: loaded into running machines, and bound into the OS images so that a
// machine booting later imports it), then `kubectl apply --server-side -k` of the install
// overlay with its tag. The rollout of the new pods is Kubernetes' (the Deployment's and
// DaemonSets' update strategies). It returns the image's tag.
func Upgrade(ctx context.Context, dir, archive string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if archive, err = filepath.Abs(archive); err != nil {
		return "", err
	}
	st, err := LoadState(dir)
	if err != nil {
		return "", err
	}
	if st.Manifests == "" {
		return "", fmt.Errorf("%s does not record the install manifests (a cluster of an older mco dev): recreate it", statePath(dir))
	}
	tag, err := imageTag(archive)
	if err != nil {
		return "", err
	}
	if err := machine.RebindImageFile(ImagesDir(dir), NodeImagesDir+"/mco.tar", archive); err != nil {
		return "", fmt.Errorf("binding %s into the dev OS images: %w", archive, err)
	}
	st.ImageArchive = archive
	if err := st.save(dir); err != nil {
		return "", err
	}
	var errs []error
	for _, name := range st.Machines {
		if err := loadIntoRunning(ctx, MachineDir(dir, name), archive); err != nil {
			errs = append(errs, fmt.Errorf("machine %s: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return tag, installMCO(ctx, dir, filepath.Join(st.ToolsDir, "kubectl"), filepath.Join(dir, "kubeconfig"), st.Manifests, archive, st.ServerHost(), st.APIServerURL, st.Network())
}
