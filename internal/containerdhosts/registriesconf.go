package containerdhosts

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
)

// RegistriesConfPath is the file FromRegistriesConf reads, named in the generated files.
const RegistriesConfPath = "/etc/containers/registries.conf"

// registriesConfFile is the part of registries.conf read here: the [[registry]] entries, in
// containers/image's own type (the one internal/registries edits and internal/daemon/plan
// compares), so that a key means here what it means to CRI-O. The rest of the file has no
// containerd equivalent for the CRI's pulls and makes no files: the kubelet always asks for
// fully qualified image names, so unqualified-search-registries, short-name-mode and [aliases]
// never apply, and credential-helpers and additional-layer-store-auth-helper are podman's. They
// are not errors either (nor decoded, so not checked), since they change nothing a kubelet pull
// does.
type registriesConfFile struct {
	Registries []sysregistriesv2.Registry `toml:"registry"`
}

// pull-from-mirror values (sysregistriesv2.MirrorAll, MirrorByDigestOnly, MirrorByTagOnly).
const (
	pullAll        = "all"
	pullDigestOnly = "digest-only"
	pullTagOnly    = "tag-only"
)

// entry is one [[registry]] as containers/image uses it: prefix defaulted to the location,
// trailing slashes trimmed.
type entry struct {
	prefix, location string
	insecure         bool
	blocked          bool
	mirrors          []mirrorEntry
}

type mirrorEntry struct {
	location string
	insecure bool
	// digestOnly: the mirror serves digest references only (mirror-by-digest-only on the
	// registry, or pull-from-mirror = "digest-only"); otherwise it also serves tags.
	digestOnly bool
}

// readRegistriesConf decodes data and applies containers/image's own normalisation and checks
// (sysregistriesv2's postProcessRegistries), so that an entry means here what it means to
// CRI-O: a file containers/image refuses is refused too.
func readRegistriesConf(data []byte) ([]entry, []error) {
	var conf registriesConfFile
	md, err := toml.Decode(string(data), &conf)
	if err != nil {
		return nil, []error{fmt.Errorf("%s cannot be read: %w", RegistriesConfPath, err)}
	}
	var errs []error
	if md.IsDefined("registries") {
		// The v1 format ([registries.search], [registries.insecure], [registries.block]) is
		// converted by containers/image into entries this package would have to refuse or
		// translate; mco and OpenShift only write v2.
		errs = append(errs, &UnsupportedError{Field: "registries", Reason: "the v1 tables ([registries.search], [registries.insecure], [registries.block]) are not translated for containerd; write [[registry]] entries (v2) instead"})
	}
	var entries []entry
	for _, r := range conf.Registries {
		e, problems := normalise(r)
		errs = append(errs, problems...)
		if len(problems) == 0 {
			entries = append(entries, e)
		}
	}
	errs = append(errs, conflictingFlags(entries)...)
	return firstPerPrefix(entries), errs
}

func normalise(r sysregistriesv2.Registry) (entry, []error) {
	e := entry{prefix: strings.TrimRight(r.Prefix, "/"), location: strings.TrimRight(r.Location, "/"), insecure: r.Insecure, blocked: r.Blocked}
	if e.prefix == "" {
		e.prefix = e.location
	}
	name := cmp.Or(e.prefix, "(no prefix or location)")
	invalid := func(field, reason string) error {
		return &UnsupportedError{Registry: name, Field: field, Reason: reason + " (containers/image refuses this file too)"}
	}
	var errs []error
	switch {
	case e.prefix == "":
		errs = append(errs, invalid("location", "neither prefix nor location is set"))
	case hasScheme(r.Location) || hasScheme(r.Prefix):
		errs = append(errs, invalid("location", "URI schemes are not supported"))
	case e.location == "" && !strings.HasPrefix(e.prefix, "*."):
		errs = append(errs, invalid("location", "location is unset and prefix is not of the form *.example.com"))
	}
	if r.PullFromMirror != "" {
		errs = append(errs, invalid("pull-from-mirror", "set on the registry itself; it is a mirror's setting"))
	}
	for _, m := range r.Mirrors {
		me := mirrorEntry{location: strings.TrimRight(m.Location, "/"), insecure: m.Insecure}
		switch {
		case me.location == "":
			errs = append(errs, invalid("mirror.location", "a mirror has no location"))
		case hasScheme(m.Location):
			errs = append(errs, invalid("mirror.location", fmt.Sprintf("mirror %q: URI schemes are not supported", m.Location)))
		}
		switch m.PullFromMirror {
		case "", pullAll, pullTagOnly:
		case pullDigestOnly:
			me.digestOnly = true
		default:
			errs = append(errs, invalid("mirror.pull-from-mirror", fmt.Sprintf("mirror %q: unsupported value %q", m.Location, m.PullFromMirror)))
		}
		if r.MirrorByDigestOnly {
			if m.PullFromMirror != "" {
				errs = append(errs, invalid("mirror.pull-from-mirror", fmt.Sprintf("mirror %q: set together with mirror-by-digest-only", m.Location)))
			}
			me.digestOnly = true
		}
		e.mirrors = append(e.mirrors, me)
	}
	return e, errs
}

func hasScheme(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// conflictingFlags: containers/image refuses one location listed with different insecure or
// blocked settings.
func conflictingFlags(entries []entry) []error {
	var errs []error
	seen := map[string]entry{}
	for _, e := range entries {
		key := cmp.Or(e.location, e.prefix)
		if first, ok := seen[key]; ok {
			if first.insecure != e.insecure {
				errs = append(errs, &UnsupportedError{Registry: e.prefix, Field: "insecure", Reason: fmt.Sprintf("location %s is listed again with a different insecure setting (containers/image refuses this file too)", key)})
			}
			if first.blocked != e.blocked {
				errs = append(errs, &UnsupportedError{Registry: e.prefix, Field: "blocked", Reason: fmt.Sprintf("location %s is listed again with a different blocked setting (containers/image refuses this file too)", key)})
			}
			continue
		}
		seen[key] = e
	}
	return errs
}

// firstPerPrefix keeps the first entry of each prefix, sorted by prefix, as containers/image
// does: a later entry with the same prefix never applies.
func firstPerPrefix(entries []entry) []entry {
	var out []entry
	seen := map[string]bool{}
	for _, e := range entries {
		if !seen[e.prefix] {
			seen[e.prefix] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b entry) int { return strings.Compare(a.prefix, b.prefix) })
	return out
}

var (
	anchoredDomain = regexp.MustCompile(`^(?:` + reference.DomainRegexp.String() + `)$`)
	anchoredPath   = regexp.MustCompile(`^(?:` + reference.NameRegexp.String() + `)$`)
)

// splitLocation splits a registries.conf location or prefix into the registry host[:port] and
// the repository path below it ("" for a whole registry), as containers/image matches them:
// the first component is always the registry.
func splitLocation(loc string) (host, path string, err error) {
	host, path, _ = strings.Cut(loc, "/")
	if !anchoredDomain.MatchString(host) {
		return "", "", fmt.Errorf("%q is not a registry host[:port]", host)
	}
	if path != "" && !anchoredPath.MatchString(path) {
		return "", "", fmt.Errorf("%q is not a repository path (a tag or digest cannot scope a registry)", path)
	}
	return host, path, nil
}
