package containerdhosts

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// refusal is an *UnsupportedError expected, by registry and field.
type refusal struct{ registry, field string }

// refusals is every *UnsupportedError in err, as (registry, field).
func refusals(t *testing.T, err error) []refusal {
	t.Helper()
	var out []refusal
	var walk func(error)
	walk = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		var u *UnsupportedError
		if !errors.As(err, &u) {
			t.Errorf("an error that is not an *UnsupportedError: %v", err)
			return
		}
		if u.Reason == "" {
			t.Errorf("%v: no reason", u)
		}
		out = append(out, refusal{u.Registry, u.Field})
	}
	if err != nil {
		walk(err)
	}
	return out
}

func diff(want, got string) string {
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(want), B: difflib.SplitLines(got), FromFile: "want", ToFile: "got", Context: 2})
	return d
}

// checkFiles compares files to want (path → bytes after the header), in order.
func checkFiles(t *testing.T, files []File, want map[string]string) {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Mode != 0o644 {
			t.Errorf("%s: mode %o", f.Path, f.Mode)
		}
		if !GeneratedByMCO(f.Data) {
			t.Errorf("%s: no generated-by header:\n%s", f.Path, f.Data)
		}
		w, ok := want[f.Path]
		if !ok {
			t.Errorf("unexpected %s:\n%s", f.Path, f.Data)
			continue
		}
		if got := strings.TrimPrefix(string(f.Data), header); got != w {
			t.Errorf("%s:\n%s", f.Path, diff(w, got))
		}
	}
	if !slices.IsSorted(paths) {
		t.Errorf("files not sorted by path: %v", paths)
	}
	for p := range want {
		if !slices.Contains(paths, p) {
			t.Errorf("missing %s", p)
		}
	}
}

func TestFromRegistriesConf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conf    string
		want    map[string]string
		refused []refusal
	}{{
		name: "no registries, only what has no containerd equivalent: no files, no error",
		conf: `unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
short-name-mode = "enforcing"
credential-helpers = ["containers-auth.json"]
[aliases]
  "fedora" = "registry.fedoraproject.org/fedora"
[[registry]]
  location = "quay.io"
`,
	}, {
		name: "a registry without mirrors, insecure or blocked needs no file",
		conf: `[[registry]]
  location = "quay.io"
[[registry]]
  location = "quay.io/ns/app"
`,
	}, {
		name: "digest mirrors (pull-from-mirror) then tag mirrors of a whole registry, in order",
		conf: `[[registry]]
  prefix = ""
  location = "registry-a.com"
  [[registry.mirror]]
    location = "digest-1.example.com"
    pull-from-mirror = "digest-only"
  [[registry.mirror]]
    location = "tag-1.example.com:5000"
    pull-from-mirror = "tag-only"
  [[registry.mirror]]
    location = "all.example.com"
`,
		want: map[string]string{"/etc/containerd/certs.d/registry-a.com/hosts.toml": `server = "https://registry-a.com"

[host."https://digest-1.example.com"]
  capabilities = ["pull"]

[host."https://tag-1.example.com:5000"]
  capabilities = ["pull", "resolve"]

[host."https://all.example.com"]
  capabilities = ["pull", "resolve"]
`},
	}, {
		name: "mirror-by-digest-only on the registry makes every mirror pull-only",
		conf: `[[registry]]
  location = "registry-a.com"
  mirror-by-digest-only = true
  [[registry.mirror]]
    location = "m1.example.com"
  [[registry.mirror]]
    location = "m2.example.com"
`,
		want: map[string]string{"/etc/containerd/certs.d/registry-a.com/hosts.toml": `server = "https://registry-a.com"

[host."https://m1.example.com"]
  capabilities = ["pull"]

[host."https://m2.example.com"]
  capabilities = ["pull"]
`},
	}, {
		name: "docker.io's API is registry-1.docker.io, as a source and as a mirror; the directory keeps the name images use",
		conf: `[[registry]]
  location = "docker.io"
  [[registry.mirror]]
    location = "mirror.gcr.io"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "docker.io/quay-mirror"
    pull-from-mirror = "digest-only"
`,
		want: map[string]string{
			"/etc/containerd/certs.d/docker.io/hosts.toml": `server = "https://registry-1.docker.io"

[host."https://mirror.gcr.io"]
  capabilities = ["pull"]
`,
			"/etc/containerd/certs.d/quay.io/hosts.toml": `server = "https://quay.io"

[host."https://registry-1.docker.io/v2/quay-mirror"]
  capabilities = ["pull"]
  override_path = true
`},
	}, {
		name: "a repository mirrored at the same path, and under a prefix (override_path); a port keeps its colon in the directory",
		conf: `[[registry]]
  location = "registry.example.com:5000/ns/app"
  [[registry.mirror]]
    location = "same.example.com/ns/app"
    pull-from-mirror = "digest-only"
  [[registry.mirror]]
    location = "cache.example.com/proxy/ns/app/"
    pull-from-mirror = "digest-only"
`,
		want: map[string]string{"/etc/containerd/certs.d/registry.example.com:5000/hosts.toml": `server = "https://registry.example.com:5000"

[host."https://same.example.com"]
  capabilities = ["pull"]

[host."https://cache.example.com/v2/proxy"]
  capabilities = ["pull"]
  override_path = true
`},
	}, {
		name: "an insecure mirror: HTTPS without verification, then plain HTTP",
		conf: `[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "mirror.example.com/cache"
    insecure = true
    pull-from-mirror = "digest-only"
`,
		want: map[string]string{"/etc/containerd/certs.d/quay.io/hosts.toml": `server = "https://quay.io"

[host."https://mirror.example.com/v2/cache"]
  capabilities = ["pull"]
  skip_verify = true
  override_path = true

[host."http://mirror.example.com/v2/cache"]
  capabilities = ["pull"]
  override_path = true
`},
	}, {
		name: "an insecure registry: its mirrors, then HTTPS without verification, then plain HTTP as the server",
		conf: `[[registry]]
  location = "insecure.example.com"
  insecure = true
[[registry]]
  location = "both.example.com"
  insecure = true
  [[registry.mirror]]
    location = "mirror.example.com"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "both.example.com/ns"
  insecure = true
`,
		want: map[string]string{
			"/etc/containerd/certs.d/insecure.example.com/hosts.toml": `server = "http://insecure.example.com"

[host."https://insecure.example.com"]
  capabilities = ["pull", "resolve", "push"]
  skip_verify = true
`,
			"/etc/containerd/certs.d/both.example.com/hosts.toml": `server = "http://both.example.com"

[host."https://mirror.example.com"]
  capabilities = ["pull"]

[host."https://both.example.com"]
  capabilities = ["pull", "resolve", "push"]
  skip_verify = true
`},
	}, {
		name: "digest mirrors of two repositories of one host share its file, in containers/image's (prefix) order, each mirror once",
		conf: `[[registry]]
  location = "quay.io/ns/b"
  [[registry.mirror]]
    location = "mirror.example.com/ns/b"
    pull-from-mirror = "digest-only"
  [[registry.mirror]]
    location = "other.example.com/cache/ns/b"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io/ns/a"
  [[registry.mirror]]
    location = "mirror.example.com/ns/a"
    pull-from-mirror = "digest-only"
`,
		want: map[string]string{"/etc/containerd/certs.d/quay.io/hosts.toml": `server = "https://quay.io"

[host."https://mirror.example.com"]
  capabilities = ["pull"]

[host."https://other.example.com/v2/cache"]
  capabilities = ["pull"]
  override_path = true
`},
	}, {
		name: "tag mirrors of a whole registry carried into a nested entry (as OpenShift writes them) are the same for every image",
		conf: `[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "tags.example.com"
    pull-from-mirror = "tag-only"
[[registry]]
  location = "quay.io/ns"
  [[registry.mirror]]
    location = "digests.example.com/ns"
    pull-from-mirror = "digest-only"
  [[registry.mirror]]
    location = "tags.example.com/ns"
    pull-from-mirror = "tag-only"
`,
		want: map[string]string{"/etc/containerd/certs.d/quay.io/hosts.toml": `server = "https://quay.io"

[host."https://tags.example.com"]
  capabilities = ["pull", "resolve"]

[host."https://digests.example.com"]
  capabilities = ["pull"]
`},
	}, {
		name: "files are sorted by path, whatever the order of the prefixes",
		conf: `[[registry]]
  location = "registry.example.com"
  [[registry.mirror]]
    location = "m.example.com"
[[registry]]
  location = "registry.example.com.cn"
  [[registry.mirror]]
    location = "m.example.com"
`,
		want: map[string]string{
			"/etc/containerd/certs.d/registry.example.com/hosts.toml": `server = "https://registry.example.com"

[host."https://m.example.com"]
  capabilities = ["pull", "resolve"]
`,
			"/etc/containerd/certs.d/registry.example.com.cn/hosts.toml": `server = "https://registry.example.com.cn"

[host."https://m.example.com"]
  capabilities = ["pull", "resolve"]
`},
	}, {
		name: "the first entry of a prefix wins, as in containers/image",
		conf: `[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "first.example.com"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "second.example.com"
    pull-from-mirror = "digest-only"
`,
		want: map[string]string{"/etc/containerd/certs.d/quay.io/hosts.toml": `server = "https://quay.io"

[host."https://first.example.com"]
  capabilities = ["pull"]
`},
	}, {
		name: "blocked (blockedRegistries, NeverContactSource) is refused: containerd cannot block",
		conf: `[[registry]]
  location = "blocked.example.com"
  blocked = true
[[registry]]
  location = "registry.example.com/ns/app"
  blocked = true
  [[registry.mirror]]
    location = "mirror.example.com/ns/app"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "fine.example.com"
`,
		refused: []refusal{{"blocked.example.com", "blocked"}, {"registry.example.com/ns/app", "blocked"}},
	}, {
		name: "a mirror that renames the repository is refused",
		conf: `[[registry]]
  location = "registry.redhat.io/openshift4"
  [[registry.mirror]]
    location = "mirror.example.com/redhat"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io/ns/app"
  [[registry.mirror]]
    location = "mirror.example.com/app"
    pull-from-mirror = "digest-only"
  [[registry.mirror]]
    location = "mirror.example.com/xns/app"
    pull-from-mirror = "digest-only"
`,
		refused: []refusal{{"quay.io/ns/app", "mirror.location"}, {"quay.io/ns/app", "mirror.location"}, {"registry.redhat.io/openshift4", "mirror.location"}},
	}, {
		name: "tag mirrors of one repository would resolve every repository's tags: refused",
		conf: `[[registry]]
  location = "quay.io/ns/app"
  [[registry.mirror]]
    location = "mirror.example.com/ns/app"
    pull-from-mirror = "tag-only"
`,
		refused: []refusal{{"quay.io/ns/app", "mirror.pull-from-mirror"}},
	}, {
		name: "a nested entry without the whole registry's tag mirrors would have its tags resolved by them: refused",
		conf: `[[registry]]
  location = "quay.io"
  [[registry.mirror]]
    location = "tags.example.com"
[[registry]]
  location = "quay.io/ns"
  [[registry.mirror]]
    location = "digests.example.com/ns"
    pull-from-mirror = "digest-only"
`,
		refused: []refusal{{"quay.io/ns", "mirror.pull-from-mirror"}},
	}, {
		name: "insecure for one repository would be insecure for the whole host: refused",
		conf: `[[registry]]
  location = "quay.io/ns"
  insecure = true
[[registry]]
  location = "registry.example.com"
  insecure = true
[[registry]]
  location = "registry.example.com/secure"
  [[registry.mirror]]
    location = "mirror.example.com/secure"
    pull-from-mirror = "digest-only"
`,
		refused: []refusal{{"quay.io/ns", "insecure"}, {"registry.example.com", "insecure"}},
	}, {
		name: "one mirror URL insecure for one entry and not for another: refused",
		conf: `[[registry]]
  location = "quay.io/a"
  [[registry.mirror]]
    location = "mirror.example.com/a"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "quay.io/b"
  [[registry.mirror]]
    location = "mirror.example.com/b"
    insecure = true
    pull-from-mirror = "digest-only"
`,
		refused: []refusal{{"quay.io/b", "mirror.insecure"}},
	}, {
		name: "wildcard prefixes and a prefix rewritten to another location are refused",
		conf: `[[registry]]
  prefix = "*.example.com"
  insecure = true
[[registry]]
  prefix = "example.com/foo"
  location = "internal.example.com/bar"
`,
		refused: []refusal{{"*.example.com", "prefix"}, {"example.com/foo", "location"}},
	}, {
		name: "what containers/image refuses is refused too",
		conf: `[[registry]]
  location = "https://quay.io"
[[registry]]
  location = "a.example.com"
  pull-from-mirror = "digest-only"
[[registry]]
  location = "b.example.com"
  mirror-by-digest-only = true
  [[registry.mirror]]
    location = "m.example.com"
    pull-from-mirror = "digest-only"
[[registry]]
  location = "c.example.com"
  [[registry.mirror]]
    location = "m.example.com"
    pull-from-mirror = "sometimes"
  [[registry.mirror]]
    location = ""
[[registry]]
  location = "d.example.com"
  insecure = true
[[registry]]
  prefix = "d.example.com/x"
  location = "d.example.com"
[[registry]]
  prefix = "e.example.com/ns:tag"
  location = "e.example.com/ns:tag"
`,
		refused: []refusal{{"https://quay.io", "location"}, {"a.example.com", "pull-from-mirror"}, {"b.example.com", "mirror.pull-from-mirror"},
			{"c.example.com", "mirror.pull-from-mirror"}, {"c.example.com", "mirror.location"}, {"d.example.com", "insecure"}, {"d.example.com/x", "insecure"}, {"d.example.com/x", "location"},
			{"e.example.com/ns:tag", "prefix"}},
	}, {
		name:    "the v1 format is refused",
		conf:    "[registries.insecure]\nregistries = [\"quay.io\"]\n",
		refused: []refusal{{"", "registries"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := FromRegistriesConf([]byte(tc.conf))
			got := refusals(t, err)
			slices.SortFunc(got, cmpRefusal)
			want := slices.Clone(tc.refused)
			slices.SortFunc(want, cmpRefusal)
			if !slices.Equal(got, want) {
				t.Fatalf("refused %v, want %v (%v)", got, want, err)
			}
			if err != nil {
				if files != nil {
					t.Errorf("files with an error: %v", files)
				}
				return
			}
			checkFiles(t, files, tc.want)
		})
	}
}

func cmpRefusal(a, b refusal) int {
	return strings.Compare(a.registry+"\x00"+a.field, b.registry+"\x00"+b.field)
}

func TestFromRegistriesConfUnreadable(t *testing.T) {
	_, err := FromRegistriesConf([]byte("[[registry]\nlocation = 1"))
	var u *UnsupportedError
	if err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), RegistriesConfPath) {
		t.Fatalf("got %v, want a plain error naming %s", err, RegistriesConfPath)
	}
}

func TestFromRegistriesConfDeterministic(t *testing.T) {
	conf := []byte(`[[registry]]
  location = "b.example.com"
  [[registry.mirror]]
    location = "m.example.com"
[[registry]]
  location = "a.example.com"
  [[registry.mirror]]
    location = "m.example.com"
`)
	first, err := FromRegistriesConf(conf)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := FromRegistriesConf(conf)
		if !slices.EqualFunc(first, again, func(a, b File) bool { return a.Path == b.Path && string(a.Data) == string(b.Data) }) {
			t.Fatal("different output for the same input")
		}
	}
}

func TestUnsupportedErrorNamesRegistryFieldAndReason(t *testing.T) {
	err := (&UnsupportedError{Registry: "quay.io/ns", Field: "blocked", Reason: "containerd has no setting that blocks a registry"}).Error()
	for _, want := range []string{"registries.conf", "quay.io/ns", "blocked", "containerd has no setting"} {
		if !strings.Contains(err, want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}
