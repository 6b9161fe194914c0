package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
)

// RegistriesConfPath is the file OpenShift reserves the Special action for.
const RegistriesConfPath = "/etc/containers/registries.conf"

// Values of pull-from-mirror, as containers/image reads them ("" is "all").
const (
	pullAll        = "all"
	pullDigestOnly = "digest-only"
)

// RegistriesConfDrain decides the Special action: whether moving the node's registries.conf
// from old to new (nil: the config has no such file) needs a drain, and why, as a clause for
// the plan's explanation. crio is reloaded either way.
//
// As OpenShift's isSafeContainerRegistryConfChanges, no drain when the change only adds
// mirrors used for digest pulls only (a digest names the content, and the registry itself is
// still tried last), adds registries that only bring such mirrors, restricts existing mirrors
// to digest pulls, or appends to unqualified-search-registries. A registry's
// mirror-by-digest-only counts through the mirrors it governs: moving it into each mirror's
// pull-from-mirror ("oc adm migrate icsp") changes nothing, dropping it (tag pulls now use the
// mirrors) drains. Anything else drains, including what OpenShift lets through because it does
// not look:
//   - a mirror's insecure, or any setting outside [[registry]] and
//     unqualified-search-registries (short-name-mode, aliases, credential-helpers, v1 tables;
//     an empty value is no value, as containers/image reads them);
//   - a new registry that is blocked, redirects (prefix ≠ location), or sits under an existing
//     one (the longest prefix wins, so it takes images away from that entry's mirrors);
//   - a file that cannot be read: TOML errors, a scope declared twice, [[registry]] settings
//     containers/image does not know. A new file containers/image cannot decode never gets
//     here: Compute refuses the update (readableRegistriesConf); a current one that it cannot
//     decode drains, where OpenShift fails the update and so never lets the repair through.
func RegistriesConfDrain(old, new []byte) (drain bool, why string) {
	before, err := parseRegistriesConf(old)
	if err != nil {
		return true, "the current registries.conf cannot be read: " + err.Error()
	}
	after, err := parseRegistriesConf(new)
	if err != nil {
		return true, "the new registries.conf cannot be read: " + err.Error()
	}
	added, problem := compareRegistriesConf(before, after)
	if problem != "" {
		return true, problem
	}
	if len(added) == 0 {
		return false, "no registry, mirror or search entry changed"
	}
	return false, "only safe changes: " + listSome(added, 3)
}

// readableRegistriesConf decodes data as containers/image's v2 registries.conf, as OpenShift
// does before writing the file: TOML errors and values of the wrong type fail; keys it does not
// know (v1 tables among them) are ignored, as containers/image ignores them.
func readableRegistriesConf(data []byte) error {
	var conf sysregistriesv2.V2RegistriesConf
	_, err := toml.Decode(string(data), &conf)
	return err
}

// registriesConf is the file as compared here. Its [[registry]] entries are containers/image's
// own type, the one internal/registries edits and internal/containerdhosts reads.
type registriesConf struct {
	UnqualifiedSearchRegistries []string                   `toml:"unqualified-search-registries"`
	Registries                  []sysregistriesv2.Registry `toml:"registry"`
	// other is every other top-level setting, compared as a whole.
	other map[string]any
}

// scope is what the entry matches images by, as containers/image keys it.
func scope(r sysregistriesv2.Registry) string {
	if r.Prefix != "" {
		return r.Prefix
	}
	return r.Location
}

// use is which pulls go through mirror m of r ("all", "digest-only" or "tag-only").
func use(r sysregistriesv2.Registry, m sysregistriesv2.Endpoint) string {
	switch {
	case r.MirrorByDigestOnly:
		return pullDigestOnly
	case m.PullFromMirror == "":
		return pullAll
	}
	return m.PullFromMirror
}

// mirrorAt is r's mirror at location.
func mirrorAt(r sysregistriesv2.Registry, location string) (sysregistriesv2.Endpoint, bool) {
	i := slices.IndexFunc(r.Mirrors, func(m sysregistriesv2.Endpoint) bool { return m.Location == location })
	if i < 0 {
		return sysregistriesv2.Endpoint{}, false
	}
	return r.Mirrors[i], true
}

// parseRegistriesConf decodes the file once: the top-level keys stay undecoded until each is
// decoded into its typed field or, for every other setting, into a generic value.
func parseRegistriesConf(data []byte) (registriesConf, error) {
	var conf registriesConf
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		return conf, err
	}
	conf.other = map[string]any{}
	for k, prim := range top {
		var err error
		switch k {
		case "registry":
			err = md.PrimitiveDecode(prim, &conf.Registries)
		case "unqualified-search-registries":
			err = md.PrimitiveDecode(prim, &conf.UnqualifiedSearchRegistries)
		default:
			var v any
			// containers/image decodes these into typed fields, where an empty value is no
			// value: OpenShift's encoder writes short-name-mode = "" into every file it generates.
			if err = md.PrimitiveDecode(prim, &v); err == nil && !empty(v) {
				conf.other[k] = v
			}
		}
		if err != nil {
			return conf, fmt.Errorf("%s: %w", k, err)
		}
	}
	for _, k := range md.Undecoded() {
		if k[0] == "registry" {
			return conf, fmt.Errorf("%s is not a setting containers/image knows", k)
		}
	}
	seen := make(map[string]bool, len(conf.Registries))
	for _, r := range conf.Registries {
		s := scope(r)
		if s == "" {
			return conf, fmt.Errorf("a [[registry]] has neither prefix nor location")
		}
		if seen[s] {
			return conf, fmt.Errorf("registry %q is declared twice", s)
		}
		seen[s] = true
	}
	return conf, nil
}

// compareRegistriesConf lists what after adds to before, or says what else changed.
func compareRegistriesConf(before, after registriesConf) (added []string, problem string) {
	if k := firstChangedKey(before.other, after.other); k != "" {
		return nil, fmt.Sprintf("setting %s changed", k)
	}
	was, is := before.UnqualifiedSearchRegistries, after.UnqualifiedSearchRegistries
	if len(is) < len(was) || !slices.Equal(was, is[:len(was)]) {
		return nil, "unqualified-search-registries lost or reordered entries (the search order matters)"
	}
	for _, s := range is[len(was):] {
		added = append(added, "appended search registry "+s)
	}
	old := make(map[string]sysregistriesv2.Registry, len(before.Registries))
	for _, r := range before.Registries {
		old[scope(r)] = r
	}
	for _, r := range before.Registries {
		if !slices.ContainsFunc(after.Registries, func(n sysregistriesv2.Registry) bool { return scope(n) == scope(r) }) {
			return nil, fmt.Sprintf("registry %s removed", scope(r))
		}
	}
	for _, r := range after.Registries {
		var more []string
		if o, ok := old[scope(r)]; ok {
			more, problem = changedRegistry(o, r)
		} else {
			more, problem = newRegistry(r, before.Registries)
		}
		if problem != "" {
			return nil, problem
		}
		added = append(added, more...)
	}
	return added, ""
}

func changedRegistry(o, n sysregistriesv2.Registry) (added []string, problem string) {
	s := scope(n)
	for _, f := range []struct {
		name     string
		old, new any
	}{
		{"prefix", o.Prefix, n.Prefix}, {"location", o.Location, n.Location},
		{"blocked", o.Blocked, n.Blocked}, {"insecure", o.Insecure, n.Insecure},
		{"pull-from-mirror", o.PullFromMirror, n.PullFromMirror},
	} {
		if f.old != f.new {
			return nil, fmt.Sprintf("registry %s: %s changed from %v to %v", s, f.name, quoteEmpty(f.old), quoteEmpty(f.new))
		}
	}
	for _, om := range o.Mirrors {
		nm, ok := mirrorAt(n, om.Location)
		switch {
		case !ok:
			return nil, fmt.Sprintf("mirror %s of registry %s removed", om.Location, s)
		case om.Insecure != nm.Insecure:
			return nil, fmt.Sprintf("mirror %s of registry %s: insecure changed from %t to %t", om.Location, s, om.Insecure, nm.Insecure)
		case use(o, om) == use(n, nm):
		case use(n, nm) == pullDigestOnly:
			added = append(added, fmt.Sprintf("restricted mirror %s of %s to digest pulls", om.Location, s))
		default:
			return nil, fmt.Sprintf("mirror %s of registry %s is now used for %s instead of %s", om.Location, s, pulls(use(n, nm)), pulls(use(o, om)))
		}
	}
	for _, nm := range n.Mirrors {
		if _, ok := mirrorAt(o, nm.Location); ok {
			continue
		}
		if u := use(n, nm); u != pullDigestOnly {
			return nil, fmt.Sprintf("mirror %s added to registry %s is used for %s", nm.Location, s, pulls(u))
		}
		added = append(added, fmt.Sprintf("added digest-only mirror %s to %s", nm.Location, s))
	}
	return added, ""
}

func newRegistry(n sysregistriesv2.Registry, existing []sysregistriesv2.Registry) (added []string, problem string) {
	s := scope(n)
	switch {
	case n.Blocked:
		return nil, fmt.Sprintf("new registry %s is blocked", s)
	case n.Prefix != "" && n.Location != "" && n.Prefix != n.Location:
		return nil, fmt.Sprintf("new registry %s redirects its images to %s", s, n.Location)
	case len(n.Mirrors) == 0 && !n.MirrorByDigestOnly:
		// OpenShift drains here too: the entry adds no digest-only mirror.
		return nil, fmt.Sprintf("new registry %s has no digest-only mirrors", s)
	}
	for _, e := range existing {
		if within(s, scope(e)) {
			return nil, fmt.Sprintf("new registry %s takes images under %s away from that entry", s, scope(e))
		}
	}
	var locations []string
	for _, m := range n.Mirrors {
		if u := use(n, m); u != pullDigestOnly {
			return nil, fmt.Sprintf("mirror %s of new registry %s is used for %s", m.Location, s, pulls(u))
		}
		locations = append(locations, m.Location)
	}
	if len(locations) == 0 {
		return []string{"added registry " + s}, ""
	}
	return []string{fmt.Sprintf("added registry %s with digest-only mirrors %s", s, strings.Join(locations, ", "))}, ""
}

// within reports whether images under scope inner also match the broader scope outer, by
// containers/image's matching: a path prefix ending at '/', ':' or '@', or "*.domain" for
// any subdomain.
func within(inner, outer string) bool {
	if inner == outer {
		return false
	}
	if domain, ok := strings.CutPrefix(outer, "*."); ok {
		host, _, _ := strings.Cut(strings.TrimPrefix(inner, "*."), "/")
		host, _, _ = strings.Cut(host, ":")
		return strings.HasSuffix(host, "."+domain)
	}
	rest, ok := strings.CutPrefix(inner, outer)
	return ok && rest != "" && strings.ContainsRune("/:@", rune(rest[0]))
}

func empty(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case []map[string]any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func firstChangedKey(before, after map[string]any) string {
	var keys []string
	for k, v := range before {
		if w, ok := after[k]; !ok || !reflect.DeepEqual(v, w) {
			keys = append(keys, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return slices.Min(keys)
}

func pulls(use string) string {
	switch use {
	case pullAll:
		return "tag and digest pulls"
	case pullDigestOnly:
		return "digest pulls only"
	case "tag-only":
		return "tag pulls only"
	}
	return fmt.Sprintf("pull-from-mirror %q", use)
}

func quoteEmpty(v any) any {
	if v == "" {
		return `""`
	}
	return v
}

func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
