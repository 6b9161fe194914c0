package containerdhosts

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// CertsDir is the directory containerd reads a registry's hosts.toml from when its
// configuration's config_path names it (CertsDirConfigured).
const CertsDir = "/etc/containerd/certs.d"

// File is a file to write on the node.
type File struct {
	Path string
	Data []byte
	Mode os.FileMode
}

// FromRegistriesConf returns the hosts.toml files, sorted by path, that give containerd the
// meaning registries.conf (data) gives CRI-O, as far as containerd can express it: one per
// registry host that has mirrors or is insecure. A setting containerd cannot express is an
// *UnsupportedError (several joined), and then there are no files: writing the rest would
// report mirrors or restrictions as in effect that are not.
//
// containerd (remotes/docker/config, hosts.toml) configures a registry host, not a
// repository: every image of the host tries the file's [host] entries in order, then
// `server`. Each entry is used for what its capabilities allow: "pull" (fetch by digest, so
// the content is checked against the digest asked for) and "resolve" (turn a tag into a
// digest, so the host is trusted for what a tag names). The request for repository R of the
// host goes to the entry's URL path (default /v2) followed by R, whole. Hence what maps:
//   - a mirror of the whole registry, or of a repository path that the mirror keeps (source
//     quay.io/ns, mirror m.example.com/ns, or m.example.com/cache/ns with the prefix /cache
//     given as the URL path /v2/cache and override_path, so containerd does not add /v2);
//   - digest mirrors of one repository: containerd also tries them for the registry's other
//     repositories, and for the layers of pulls by tag, but only by digest, so what is pulled
//     is what the source would give (only where from changes);
//   - tag mirrors only where every image of the host has the same tag mirrors in the same
//     order, since containerd would otherwise resolve other repositories' tags through them.
func FromRegistriesConf(data []byte) ([]File, error) {
	entries, errs := readRegistriesConf(data)
	var files []File
	for _, h := range byHost(entries) {
		f, problems := h.file()
		errs = append(errs, problems...)
		if f != nil {
			files = append(files, *f)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Hosts come in prefix order, which is not path order ("r.example.com.cn" sorts before
	// "r.example.com/").
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// registryHost is the entries of one registry host[:port], in containers/image's order.
type registryHost struct {
	name    string
	entries []scopedEntry
	// problems are the entries' settings refused before grouping.
	problems []error
}

type scopedEntry struct {
	entry
	// path is the repository path the entry is scoped to; "" for the whole registry.
	path string
}

// byHost groups entries by registry host, refusing what no host's file could hold.
func byHost(entries []entry) []*registryHost {
	var hosts []*registryHost
	index := map[string]*registryHost{}
	for _, e := range entries {
		if strings.HasPrefix(e.prefix, "*.") {
			hosts = append(hosts, &registryHost{problems: []error{&UnsupportedError{Registry: e.prefix, Field: "prefix",
				Reason: "containerd matches registry hosts exactly: it has no wildcard, and its only fallback (_default) applies to every registry"}}})
			continue
		}
		host, path, err := splitLocation(e.prefix)
		if err != nil {
			hosts = append(hosts, &registryHost{problems: []error{&UnsupportedError{Registry: e.prefix, Field: "prefix", Reason: err.Error()}}})
			continue
		}
		h := index[host]
		if h == nil {
			h = &registryHost{name: host}
			index[host] = h
			hosts = append(hosts, h)
		}
		if e.location != e.prefix {
			h.problems = append(h.problems, &UnsupportedError{Registry: e.prefix, Field: "location",
				Reason: fmt.Sprintf("containerd pulls an image from the registry its name names; it cannot rewrite %s to %s", e.prefix, e.location)})
		}
		if e.blocked {
			h.problems = append(h.problems, &UnsupportedError{Registry: e.prefix, Field: "blocked",
				Reason: "containerd has no setting that blocks a registry; pulls from it would still be allowed (block it with a policy admission controller instead)"})
		}
		h.entries = append(h.entries, scopedEntry{entry: e, path: path})
	}
	return hosts
}

// file is h's hosts.toml, nil when h needs none (no mirrors, not insecure).
func (h *registryHost) file() (*File, []error) {
	errs := h.problems
	needed := false
	for _, e := range h.entries {
		needed = needed || e.insecure || len(e.mirrors) > 0
	}
	if !needed {
		return nil, errs
	}
	var list hostList
	for _, e := range h.entries {
		for _, m := range e.mirrors {
			u, err := mirrorURL(e, m)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := list.add(e.prefix, u, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, h.checkTags(list)...)
	insecure, err := h.sourceInsecure()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &File{Path: CertsDir + "/" + h.name + "/hosts.toml", Data: encode(h.name, list, insecure), Mode: 0o644}, nil
}

// mirrorURL is where containerd must send the requests for e's images so that they reach m:
// containerd appends the image's whole repository path to the URL's, so m's path must be a
// prefix (becoming the URL path) followed by e's repository path.
func mirrorURL(e scopedEntry, m mirrorEntry) (mirrorHost, error) {
	host, path, err := splitLocation(m.location)
	if err != nil {
		return mirrorHost{}, &UnsupportedError{Registry: e.prefix, Field: "mirror.location", Reason: err.Error()}
	}
	prefix, ok := path, true
	if e.path != "" {
		prefix, ok = strings.CutSuffix(path, e.path)
		ok = ok && (prefix == "" || strings.HasSuffix(prefix, "/"))
		prefix = strings.TrimSuffix(prefix, "/")
	}
	if !ok {
		return mirrorHost{}, &UnsupportedError{Registry: e.prefix, Field: "mirror.location", Reason: fmt.Sprintf(
			"containerd mirrors a registry host and appends an image's whole repository path to the mirror's (%s/IMAGE would be asked of %s/.../%s/IMAGE), so the mirror must end in /%s; %s renames the repository",
			e.prefix, host, e.path, e.path, m.location)}
	}
	return mirrorHost{host: apiHost(host), prefix: prefix}, nil
}

// apiHost is the host containerd (and containers/image) talk to for a registry name: Docker
// Hub's API is not served at docker.io.
func apiHost(host string) string {
	if host == "docker.io" {
		return "registry-1.docker.io"
	}
	return host
}

// checkTags refuses tag mirrors that containerd would use for images CRI-O would not resolve
// through them: containerd's tag mirrors are the same for every image of the host, so every
// entry of the host, and the images outside all entries when none covers the whole registry,
// must have exactly the tag mirrors of the file, in its order.
func (h *registryHost) checkTags(list hostList) []error {
	want := list.tagURLs()
	if len(want) == 0 {
		return nil
	}
	var errs []error
	wholeRegistry := false
	for _, e := range h.entries {
		wholeRegistry = wholeRegistry || e.path == ""
		var got []string
		for _, m := range e.mirrors {
			if u, err := mirrorURL(e, m); err == nil && !m.digestOnly && !slices.Contains(got, u.url("https")) {
				got = append(got, u.url("https"))
			}
		}
		if !slices.Equal(got, want) {
			errs = append(errs, &UnsupportedError{Registry: e.prefix, Field: "mirror.pull-from-mirror", Reason: fmt.Sprintf(
				"containerd resolves the tags of every image of %s through the same mirrors (%s), but this entry's tag mirrors are %s; make the mirrors digest-only, or give the whole registry %s the same tag mirrors",
				h.name, strings.Join(want, ", "), listOrNone(got), h.name)})
		}
	}
	if !wholeRegistry {
		errs = append(errs, &UnsupportedError{Registry: h.entries[0].prefix, Field: "mirror.pull-from-mirror", Reason: fmt.Sprintf(
			"containerd would resolve the tags of every image of %s through %s, not only those under the entries that list them; mirror tags of the whole registry %s, or make the mirrors digest-only",
			h.name, strings.Join(want, ", "), h.name)})
	}
	return errs
}

// sourceInsecure reports whether the registry itself is insecure. containerd's TLS settings
// are per host: that is only the same as registries.conf when every entry of the host is
// insecure and one of them is the whole registry.
func (h *registryHost) sourceInsecure() (bool, error) {
	var insecure, secure []string
	whole := false
	for _, e := range h.entries {
		if e.insecure {
			insecure = append(insecure, e.prefix)
			whole = whole || e.path == ""
		} else {
			secure = append(secure, e.prefix)
		}
	}
	switch {
	case len(insecure) == 0:
		return false, nil
	case len(secure) > 0:
		return false, &UnsupportedError{Registry: insecure[0], Field: "insecure", Reason: fmt.Sprintf(
			"containerd's TLS settings are per registry host: it cannot skip verification for %s and verify %s", strings.Join(insecure, ", "), strings.Join(secure, ", "))}
	case !whole:
		return false, &UnsupportedError{Registry: insecure[0], Field: "insecure", Reason: fmt.Sprintf(
			"containerd's TLS settings are per registry host: it would skip verification and allow plain HTTP for all of %s, not only %s", h.name, strings.Join(insecure, ", "))}
	}
	return true, nil
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
