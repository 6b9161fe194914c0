package registries

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/types"
	apicfgv1 "github.com/openshift/api/config/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	runtimeutils "github.com/openshift/runtime-utils/pkg/registries"
)

// blockedLists is what becomes of the image config's blocked and allowed registries.
type blockedLists struct {
	// registries is blocked in registries.conf; policy is rejected in policy.json; allowed is
	// accepted there. Each is nil when empty, as OpenShift builds them: nil decides which
	// files are written.
	registries, policy, allowed []string
	// dropped are blocked registries left out because they would block the release payload,
	// which has no unblocked mirror (OpenShift logs and goes on without them).
	dropped []string
}

// splitBlocked sorts src's blocked and allowed registries as OpenShift does. With a release
// image (ClusterVersion's status.desired.image), a blocked scope holding the payload's repository
// stays blocked in registries.conf only if the payload can still be pulled from a mirror that is
// not blocked; policy.json then accepts the payload repository itself, and rejects the scope
// unless it is exactly that repository. Without one (vanilla Kubernetes) every blocked scope is
// blocked in both files.
func splitBlocked(releaseImage string, src apicfgv1.RegistrySources, idms []*apicfgv1.ImageDigestMirrorSet, icsp []*apioperatorsv1alpha1.ImageContentSourcePolicy) (blockedLists, error) {
	var out blockedLists
	if releaseImage == "" {
		out.registries = append(out.registries, src.BlockedRegistries...)
		out.policy = append(out.policy, src.BlockedRegistries...)
		out.allowed = append(out.allowed, src.AllowedRegistries...)
		return out, nil
	}
	payload, err := reference.ParseNamed(releaseImage)
	if err != nil {
		return out, &Error{Object: "ClusterVersion version", Field: "status.desired.image", Reason: fmt.Sprintf("%q is not an image reference: %v", releaseImage, err)}
	}
	repo := payload.Name()
	for _, reg := range src.BlockedRegistries {
		if !runtimeutils.ScopeIsNestedInsideScope(repo, reg) {
			out.registries = append(out.registries, reg)
			out.policy = append(out.policy, reg)
			continue
		}
		mirrored, err := payloadHasUnblockedMirror(payload, src, slices.Concat(idms, digestMirrorSetsOf(icsp)))
		if err != nil {
			return out, err
		}
		if !mirrored {
			out.dropped = append(out.dropped, reg)
			continue
		}
		out.registries = append(out.registries, reg)
		if reg != repo {
			out.policy = append(out.policy, reg)
		}
		// The node must still be allowed to ask for the payload by its own name, which its
		// mirrors then serve.
		out.allowed = append(out.allowed, repo)
	}
	out.allowed = append(out.allowed, src.AllowedRegistries...)
	return out, nil
}

// digestMirrorSetsOf converts ImageContentSourcePolicies to the digest mirror sets they mean.
func digestMirrorSetsOf(icsp []*apioperatorsv1alpha1.ImageContentSourcePolicy) []*apicfgv1.ImageDigestMirrorSet {
	var out []*apicfgv1.ImageDigestMirrorSet
	for _, p := range icsp {
		set := &apicfgv1.ImageDigestMirrorSet{}
		for _, m := range p.Spec.RepositoryDigestMirrors {
			var mirrors []apicfgv1.ImageMirror
			for _, s := range m.Mirrors {
				mirrors = append(mirrors, apicfgv1.ImageMirror(s))
			}
			set.Spec.ImageDigestMirrors = append(set.Spec.ImageDigestMirrors, apicfgv1.ImageDigestMirrors{Source: m.Source, Mirrors: mirrors})
		}
		out = append(out, set)
	}
	return out
}

// payloadHasUnblockedMirror reports whether a node could still pull payload from somewhere not
// blocked, given the digest mirrors. It asks containers/image's own lookup (FindRegistry), as
// OpenShift does, which only reads a file: the one temporary file this package writes, in a
// directory of its own so the host's registries.conf.d cannot leak in.
func payloadHasUnblockedMirror(payload reference.Named, src apicfgv1.RegistrySources, idms []*apicfgv1.ImageDigestMirrorSet) (bool, error) {
	var conf sysregistriesv2.V2RegistriesConf
	if err := runtimeutils.EditRegistriesConfig(&conf, src.InsecureRegistries, src.BlockedRegistries, nil, idms, nil); err != nil {
		return false, err
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(conf); err != nil {
		return false, err
	}
	dir, err := os.MkdirTemp("", "mco-registries-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "registries.conf")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return false, err
	}
	// The library caches every file it reads, by path, forever; each call uses a new path.
	defer sysregistriesv2.InvalidateCache()
	ctx := &types.SystemContext{SystemRegistriesConfPath: path, SystemRegistriesConfDirPath: filepath.Join(dir, "registries.conf.d")}
	reg, err := sysregistriesv2.FindRegistry(ctx, payload.Name())
	if err != nil {
		return false, fmt.Errorf("looking up the release payload %s among the mirrors: %w", payload.Name(), err)
	}
	if reg == nil {
		return false, nil
	}
	sources, err := reg.PullSourcesFromReference(payload)
	if err != nil {
		return false, fmt.Errorf("looking up the release payload %s among the mirrors: %w", payload.Name(), err)
	}
	for _, s := range sources {
		blocked := false
		for _, b := range src.BlockedRegistries {
			if runtimeutils.ScopeIsNestedInsideScope(s.Reference.Name(), b) {
				blocked = true
			}
		}
		if !blocked {
			return true, nil
		}
	}
	return false, nil
}
