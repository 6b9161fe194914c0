package registries

import (
	"fmt"
	"regexp"

	apicfgv1 "github.com/openshift/api/config/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	runtimeutils "github.com/openshift/runtime-utils/pkg/registries"
)

// openshift/api's patterns for a mirror and for a mirror set's source (the CRDs' kubebuilder
// patterns, checked against config/crd by a test). The API server enforces them for
// ImageDigestMirrorSet and ImageTagMirrorSet; OpenShift's controller checks them again because
// ImageContentSourcePolicy's CRD has none.
const (
	MirrorPattern = `^((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(?::[0-9]+)?)(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?$`
	SourcePattern = `^\*(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+$|` + MirrorPattern
)

var (
	mirrorRegexp = regexp.MustCompile(MirrorPattern)
	sourceRegexp = regexp.MustCompile(SourcePattern)
)

const imageObject = "Image cluster"

// validateScopes checks the image config's registry lists as OpenShift does: a scope is a
// registry, namespace or repository, or a "*.domain" wildcard.
func validateScopes(src apicfgv1.RegistrySources) error {
	lists := []struct {
		field  string
		scopes []string
	}{
		{"insecureRegistries", src.InsecureRegistries},
		{"blockedRegistries", src.BlockedRegistries},
		{"allowedRegistries", src.AllowedRegistries},
	}
	for _, l := range lists {
		for i, s := range l.scopes {
			if !runtimeutils.IsValidRegistriesConfScope(s) {
				return &Error{Object: imageObject, Field: fmt.Sprintf("spec.registrySources.%s[%d]", l.field, i),
					Reason: fmt.Sprintf("%q is not a registry scope (host[:port][/namespace...], or *.domain without a path, port or further *)", s)}
			}
		}
	}
	return nil
}

// mirrorSet is one source's mirrors in any of the three kinds, with where it came from.
type mirrorSet struct {
	object, field string
	source        string
	mirrors       []string
	policy        apicfgv1.MirrorSourcePolicy
}

// mirrorSets lists every mirror set in OpenShift's validation order: digest mirror sets, then
// content source policies (as digest mirror sets that always allow contacting the source), then
// tag mirror sets.
func mirrorSets(idms []*apicfgv1.ImageDigestMirrorSet, icsp []*apioperatorsv1alpha1.ImageContentSourcePolicy, itms []*apicfgv1.ImageTagMirrorSet) []mirrorSet {
	var out []mirrorSet
	for _, o := range idms {
		for i, m := range o.Spec.ImageDigestMirrors {
			out = append(out, mirrorSet{"ImageDigestMirrorSet " + o.Name, fmt.Sprintf("spec.imageDigestMirrors[%d]", i), m.Source, mirrorStrings(m.Mirrors), m.MirrorSourcePolicy})
		}
	}
	for _, o := range icsp {
		for i, m := range o.Spec.RepositoryDigestMirrors {
			out = append(out, mirrorSet{"ImageContentSourcePolicy " + o.Name, fmt.Sprintf("spec.repositoryDigestMirrors[%d]", i), m.Source, m.Mirrors, ""})
		}
	}
	for _, o := range itms {
		for i, m := range o.Spec.ImageTagMirrors {
			out = append(out, mirrorSet{"ImageTagMirrorSet " + o.Name, fmt.Sprintf("spec.imageTagMirrors[%d]", i), m.Source, mirrorStrings(m.Mirrors), m.MirrorSourcePolicy})
		}
	}
	return out
}

func mirrorStrings(mirrors []apicfgv1.ImageMirror) []string {
	out := make([]string, len(mirrors))
	for i, m := range mirrors {
		out[i] = string(m)
	}
	return out
}

// validateMirrorSets refuses what OpenShift's controller refuses: a malformed source or mirror,
// two sets giving one source different mirrorSourcePolicies, and NeverContactSource on a set
// that lists its own source as a mirror.
func validateMirrorSets(sets []mirrorSet) error {
	type decided struct {
		policy apicfgv1.MirrorSourcePolicy
		by     mirrorSet
	}
	policies := map[string]decided{}
	for _, s := range sets {
		if !sourceRegexp.MatchString(s.source) {
			return &Error{Object: s.object, Field: s.field + ".source", Reason: fmt.Sprintf("%q is not a registry, namespace or repository (lower-case path), nor a *.domain wildcard", s.source)}
		}
		policy := s.policy
		if policy == "" {
			policy = apicfgv1.AllowContactingSource
		}
		if d, ok := policies[s.source]; ok && d.policy != policy {
			return &Error{Object: s.object, Field: s.field + ".mirrorSourcePolicy",
				Reason: fmt.Sprintf("%s conflicts with %s, which %s sets for the same source %q (%s)", policy, d.policy, d.by.object, s.source, d.by.field)}
		} else if !ok {
			policies[s.source] = decided{policy, s}
		}
		for j, m := range s.mirrors {
			if !mirrorRegexp.MatchString(m) {
				return &Error{Object: s.object, Field: fmt.Sprintf("%s.mirrors[%d]", s.field, j), Reason: fmt.Sprintf("%q is not a registry, namespace or repository (lower-case path)", m)}
			}
			if policy == apicfgv1.NeverContactSource && m == s.source {
				return &Error{Object: s.object, Field: fmt.Sprintf("%s.mirrors[%d]", s.field, j),
					Reason: fmt.Sprintf("the source %q is one of its own mirrors, so mirrorSourcePolicy NeverContactSource cannot hold", s.source)}
			}
		}
	}
	return nil
}
