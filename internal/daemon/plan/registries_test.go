package plan

import (
	"strings"
	"testing"
)

// Inputs for the cases OpenShift's TestIsDrainRequired (pkg/daemon/drain_test.go) covers,
// rewritten with our own registries; each comment names the OpenShift config it stands for.
const (
	search = `unqualified-search-registries = ["registry.example.org", "quay.example.org"]
`
	// mc3: one registry, a mirror used for all pulls.
	appPlain = search + `
[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
`
	// mc1: plus a registry whose mirror is digest-only.
	appPlainDBDigest = appPlain + `
[[registry]]
  location = "apps.example.org/team/db"
  [[registry.mirror]]
    location = "mirror.example.net/team/db"
    pull-from-mirror = "digest-only"
`
	// mc2: plus a second digest-only mirror for the db registry.
	appPlainDBTwoDigest = appPlainDBDigest + `
  [[registry.mirror]]
    location = "backup.example.net/team/db"
    pull-from-mirror = "digest-only"
`
	// mc5: the app mirror is digest-only.
	appDigest = search + `
[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
    pull-from-mirror = "digest-only"
`
	// mc4: mc5 with one more search registry.
	appDigestMoreSearch = `unqualified-search-registries = ["registry.example.org", "quay.example.org", "docker.example.org"]
[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
    pull-from-mirror = "digest-only"
`
	// mc6: plus a db registry without mirrors.
	appDigestDBBare = appDigest + `
[[registry]]
  location = "apps.example.org/team/db"
`
	// mc7: the db registry gets a mirror used for all pulls.
	appDigestDBPlain = appDigestDBBare + `
  [[registry.mirror]]
    location = "mirror.example.net/team/db"
`
	// mc8, mc9, mc10: a prefix rewritten to a location, blocked, and without the prefix.
	aliased = search + `
[[registry]]
  prefix = "alias.example.org"
  location = "apps.example.org/team/app"
`
	aliasedBlocked = aliased + `  blocked = true
`
	unaliased = search + `
[[registry]]
  prefix = ""
  location = "apps.example.org/team/app"
`
	// mc11: mc9 plus a new registry with a digest-only mirror.
	aliasedBlockedDBDigest = aliasedBlocked + `
[[registry]]
  location = "apps.example.org/team/db"
  [[registry.mirror]]
    location = "mirror.example.net/team/db"
    pull-from-mirror = "digest-only"
`
	// mc12, mc13: an ImageContentSourcePolicy-style registry (mirror-by-digest-only), then a
	// second mirror; mc14: plus a new registry whose mirror is used for all pulls.
	icsp = search + `
[[registry]]
  location = "apps.example.org/team/app"
  mirror-by-digest-only = true
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
`
	icspTwoMirrors = icsp + `  [[registry.mirror]]
    location = "backup.example.net/team/app"
`
	icspPlusPlain = icsp + `
[[registry]]
  location = "apps.example.org/team/app-v2"
  mirror-by-digest-only = false
  [[registry.mirror]]
    location = "mirror.example.net/team/app-v2"
`
)

func TestRegistriesConfDrainOpenShiftCases(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		drain    bool
		why      string
	}{
		{"mc1→mc1 nothing changed", appPlainDBDigest, appPlainDBDigest, false, "no registry, mirror or search entry changed"},
		{"mc3→mc1 new registry with a digest-only mirror", appPlain, appPlainDBDigest, false,
			"only safe changes: added registry apps.example.org/team/db with digest-only mirrors mirror.example.net/team/db"},
		{"mc5→mc6 new registry without mirrors", appDigest, appDigestDBBare, true, "new registry apps.example.org/team/db has no digest-only mirrors"},
		{"mc1→mc3 registry removed", appPlainDBDigest, appPlain, true, "registry apps.example.org/team/db removed"},
		{"mc1→mc2 digest-only mirror added", appPlainDBDigest, appPlainDBTwoDigest, false,
			"only safe changes: added digest-only mirror backup.example.net/team/db to apps.example.org/team/db"},
		{"mc9→mc11 new registry beside an unchanged blocked one", aliasedBlocked, aliasedBlockedDBDigest, false,
			"added registry apps.example.org/team/db with digest-only mirrors"},
		{"mc6→mc7 mirror for all pulls added", appDigestDBBare, appDigestDBPlain, true,
			"mirror mirror.example.net/team/db added to registry apps.example.org/team/db is used for tag and digest pulls"},
		{"mc2→mc1 mirror removed", appPlainDBTwoDigest, appPlainDBDigest, true,
			"mirror backup.example.net/team/db of registry apps.example.org/team/db removed"},
		{"mc4→mc3 search registry removed", appDigestMoreSearch, appPlain, true, "unqualified-search-registries lost or reordered entries"},
		{"mc3→mc4 search registry appended, mirror restricted to digests", appPlain, appDigestMoreSearch, false,
			"only safe changes: appended search registry docker.example.org, restricted mirror mirror.example.net/team/app of apps.example.org/team/app to digest pulls"},
		{"mc8→mc10 prefix dropped", aliased, unaliased, true, "registry alias.example.org removed"},
		{"mc8→mc9 blocked", aliased, aliasedBlocked, true, "registry alias.example.org: blocked changed from false to true"},
		{"mc1→mc6 mirror removed", appPlainDBDigest, appDigestDBBare, true,
			"mirror mirror.example.net/team/db of registry apps.example.org/team/db removed"},
		{"mc12→mc13 mirror added under mirror-by-digest-only", icsp, icspTwoMirrors, false,
			"only safe changes: added digest-only mirror backup.example.net/team/app to apps.example.org/team/app"},
		{"mc12→mc14 new registry with a mirror for all pulls", icsp, icspPlusPlain, true,
			"mirror mirror.example.net/team/app-v2 of new registry apps.example.org/team/app-v2 is used for tag and digest pulls"},
	}
	runDrainCases(t, cases)
}

func TestRegistriesConfDrain(t *testing.T) {
	reg := func(body string) string { return search + "\n[[registry]]\n" + body }
	cases := []struct {
		name     string
		old, new string
		drain    bool
		why      string
	}{
		{"file added with only safe content", "", appDigest, false,
			"appended search registry registry.example.org, appended search registry quay.example.org, added registry apps.example.org/team/app with digest-only mirrors mirror.example.net/team/app"},
		{"file removed", appDigest, "", true, "unqualified-search-registries lost"},
		{"comments, layout and registry order", appPlainDBDigest,
			search + `# rewritten by hand
[[registry]]
location="apps.example.org/team/db"
mirror=[{location="mirror.example.net/team/db", pull-from-mirror="digest-only"}]
[[registry]]
location = "apps.example.org/team/app"
insecure = false
mirror = [{location = "mirror.example.net/team/app", pull-from-mirror = ""}]
`, false, "no registry, mirror or search entry changed"},
		{"mirror order", reg(`location = "a.example.org"
mirror = [{location = "m1.example.net", pull-from-mirror = "digest-only"}, {location = "m2.example.net", pull-from-mirror = "digest-only"}]`),
			reg(`location = "a.example.org"
mirror = [{location = "m2.example.net", pull-from-mirror = "digest-only"}, {location = "m1.example.net", pull-from-mirror = "digest-only"}]`),
			false, "no registry, mirror or search entry changed"},
		{"search registries reordered", `unqualified-search-registries = ["a.example.org", "b.example.org"]`,
			`unqualified-search-registries = ["b.example.org", "a.example.org", "c.example.org"]`, true, "lost or reordered"},
		{"mirror-by-digest-only moved into each mirror (ICSP to IDMS)", icsp, search + `
[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
    pull-from-mirror = "digest-only"
`, false, "no registry, mirror or search entry changed"},
		{"mirror-by-digest-only dropped", icsp, appPlain, true,
			"mirror mirror.example.net/team/app of registry apps.example.org/team/app is now used for tag and digest pulls instead of digest pulls only"},
		{"mirror-by-digest-only set", appPlain, icsp, false, "restricted mirror mirror.example.net/team/app of apps.example.org/team/app to digest pulls"},
		{"tag-only mirror restricted to digests", reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "tag-only"}]`), reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "digest-only"}]`), false, "restricted mirror m.example.net of a.example.org to digest pulls"},
		{"digest-only mirror opened to tags", reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "digest-only"}]`), reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "tag-only"}]`), true, "is now used for tag pulls only instead of digest pulls only"},
		{"added mirror explicitly for all pulls", reg(`location = "a.example.org"`), reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "all"}]`), true, "mirror m.example.net added to registry a.example.org is used for tag and digest pulls"},
		{"mirror made insecure", reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "digest-only"}]`), reg(`location = "a.example.org"
mirror = [{location = "m.example.net", pull-from-mirror = "digest-only", insecure = true}]`), true,
			"mirror m.example.net of registry a.example.org: insecure changed from false to true"},
		{"registry made insecure", reg(`location = "a.example.org"`), reg(`location = "a.example.org"
insecure = true`), true, "registry a.example.org: insecure changed from false to true"},
		{"prefix pointed elsewhere", aliased, search + `
[[registry]]
  prefix = "alias.example.org"
  location = "apps.example.org/team/other"
`, true, `registry alias.example.org: location changed from apps.example.org/team/app to apps.example.org/team/other`},
		{"new blocked registry", appDigest, appDigest + `
[[registry]]
  location = "evil.example.org"
  blocked = true
  mirror = [{location = "m.example.net", pull-from-mirror = "digest-only"}]
`, true, "new registry evil.example.org is blocked"},
		{"new registry redirecting its images", appDigest, appDigest + `
[[registry]]
  prefix = "docker.example.org/library"
  location = "elsewhere.example.net/library"
  mirror-by-digest-only = true
`, true, "new registry docker.example.org/library redirects its images to elsewhere.example.net/library"},
		{"new registry with mirror-by-digest-only and no mirrors", appDigest, appDigest + `
[[registry]]
  location = "docker.example.org"
  mirror-by-digest-only = true
`, false, "added registry docker.example.org"},
		{"new registry under an existing one", appPlain, appPlain + `
[[registry]]
  location = "apps.example.org/team/app/worker"
  mirror = [{location = "m.example.net/worker", pull-from-mirror = "digest-only"}]
`, true, "new registry apps.example.org/team/app/worker takes images under apps.example.org/team/app away from that entry"},
		{"new registry over an existing one", appPlain, appPlain + `
[[registry]]
  location = "apps.example.org/team"
  mirror = [{location = "m.example.net/team", pull-from-mirror = "digest-only"}]
`, false, "added registry apps.example.org/team with digest-only mirrors m.example.net/team"},
		{"new registry beside a namesake", appPlain, appPlain + `
[[registry]]
  location = "apps.example.org/team/application"
  mirror = [{location = "m.example.net/application", pull-from-mirror = "digest-only"}]
`, false, "added registry apps.example.org/team/application"},
		{"new registry under a wildcard", reg(`prefix = "*.example.org"
mirror = [{location = "m.example.net"}]`), reg(`prefix = "*.example.org"
mirror = [{location = "m.example.net"}]
[[registry]]
location = "cache.example.org/x"
mirror = [{location = "m.example.net/x", pull-from-mirror = "digest-only"}]`), true,
			"new registry cache.example.org/x takes images under *.example.org away from that entry"},
		{"short-name-mode changed", appDigest, `short-name-mode = "permissive"
` + appDigest, true, "setting short-name-mode changed"},
		{"empty settings are no settings", appDigest, `short-name-mode = ""
credential-helpers = []
` + appDigest + `
[aliases]
`, false, "no registry, mirror or search entry changed"},
		{"alias added", appDigest, appDigest + `
[aliases]
  "app" = "apps.example.org/team/app"
`, true, "setting aliases changed"},
		{"unknown mirror setting", appDigest, appDigest + `  mirror-by-tag-only = true
`, true, `the new registries.conf cannot be read: registry.mirror.mirror-by-tag-only is not a setting containers/image knows`},
		{"scope declared twice", appDigest, appDigest + appDigest[len(search):], true,
			`the new registries.conf cannot be read: registry "apps.example.org/team/app" is declared twice`},
		{"current file not TOML", "[[registry]\n", appDigest, true, "the current registries.conf cannot be read: toml: "},
		{"new file not TOML", appDigest, appDigest + "location = \n", true, "the new registries.conf cannot be read: toml: "},
		{"registry without prefix or location", appDigest, appDigest + "[[registry]]\ninsecure = true\n", true, "has neither prefix nor location"},
	}
	runDrainCases(t, cases)
}

func runDrainCases(t *testing.T, cases []struct {
	name     string
	old, new string
	drain    bool
	why      string
}) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old []byte
			if tc.old != "" {
				old = []byte(tc.old)
			}
			drain, why := RegistriesConfDrain(old, []byte(tc.new))
			if drain != tc.drain || !strings.Contains(why, tc.why) {
				t.Fatalf("RegistriesConfDrain = %t, %q; want %t, containing %q", drain, why, tc.drain, tc.why)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		inner, outer string
		want         bool
	}{
		{"example.org/a/b", "example.org/a", true},
		{"example.org/a", "example.org/a", false},
		{"example.org/ab", "example.org/a", false},
		{"example.org/a", "example.org/a/b", false},
		{"example.org:5000/a", "example.org", true}, // containers/image matches this too
		{"cache.example.org/x", "*.example.org", true},
		{"*.cache.example.org", "*.example.org", true},
		{"example.org", "*.example.org", false},
		{"cache.example.org.evil.net", "*.example.org", false},
		{"*.example.org", "example.org", false},
	} {
		if got := within(tc.inner, tc.outer); got != tc.want {
			t.Errorf("within(%q, %q) = %t, want %t", tc.inner, tc.outer, got, tc.want)
		}
	}
}
