package ignition_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/validate"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
)

// FuzzParse feeds Parse any document. What succeeds must be within MaxConfigSize, one JSON value
// when it looks like JSON (no data after it), a spec 3.5 config that validates, and
// that Parse reads back to the same serialised form (so rendering, which hashes it, is stable);
// every config Convert serves from it must parse again (a client gets what we could read), for
// configs render lets through to the server (its path rules: not "/", not into /proc...).
// What fails must fail with a *ConfigError naming at least one reason.
//
// Seeds: the f.Add ones below, the spec versions of parse_test.go, and testdata/fuzz/FuzzParse
// (real configs: the repository's examples and golden renders in each spec, JSON and YAML).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `{"ignition":{"version":"3.5.0"}}`,
		`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}}`,
		`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}}`,
		`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]},"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}}`,
		"ignition:\n  version: 3.4.0\nstorage:\n  files:\n  - path: /etc/x\n    mode: 420\n    contents:\n      source: data:,hello\n",
		`{"ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["quiet"]}}`,
		`{"ignition":{"version":"3.5.0"}} garbage`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ignition.Parse(raw)
		if err != nil {
			var ce *ignition.ConfigError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("Parse(%q): error %T %v is not a ConfigError naming a problem", raw, err, err)
			}
			for _, p := range ce.Problems {
				if p.Reason == "" {
					t.Fatalf("Parse(%q): a problem without a reason: %+v", raw, ce.Problems)
				}
			}
			return
		}
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '{' && !json.Valid(trimmed) {
			t.Fatalf("Parse(%q) accepted a document that is not one JSON value", raw)
		}
		if len(raw) > ignition.MaxConfigSize {
			t.Fatalf("Parse accepted a config of %d bytes, over MaxConfigSize", len(raw))
		}
		if cfg.Ignition.Version != ignition.CanonicalVersion.String() {
			t.Fatalf("Parse(%q) gave spec %q, want %s", raw, cfg.Ignition.Version, ignition.CanonicalVersion)
		}
		if rpt := validate.ValidateWithContext(cfg, nil); rpt.IsFatal() {
			t.Fatalf("Parse(%q) accepted a config that does not validate: %s", raw, rpt)
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("Parse(%q) gave a config that does not serialise: %v", raw, err)
		}
		again, err := ignition.Parse(js)
		if err != nil {
			t.Fatalf("Parse(%q) serialised as %s does not parse again: %v", raw, js, err)
		}
		// Compared serialised, as render hashes it: an empty list and an absent one are the same.
		if js2, _ := json.Marshal(again); !bytes.Equal(js2, js) {
			t.Fatalf("Parse(%q) is not stable through serialisation:\n first %s\n again %s", raw, js, js2)
		}
		if !servable(cfg) {
			return
		}
		for _, v := range ignition.ServableVersions {
			out, err := ignition.Convert(cfg, v)
			if err != nil {
				continue // down-conversion refuses what the older spec cannot express
			}
			if v.Major == 2 && (linkPrefixQuirk(cfg) || hasDiskLayout(cfg)) {
				continue
			}
			if _, err := ignition.Parse(out); err != nil {
				t.Fatalf("Parse(%q) converted to spec %s as %s does not parse: %v", raw, v, out, err)
			}
		}
	})
}

// servable says whether render would let cfg's paths through to the server.
func servable(cfg ignition.Config) bool {
	for _, p := range nodePaths(cfg) {
		if render.PathProblem(p) != "" {
			return false
		}
	}
	return true
}

// linkPrefixQuirk says whether a path of cfg starts with the text of a link's path without being
// under it (/etc/foo-bar and a link /etc/foo). ign-converter's spec 2.x→3.0 translation, which
// Parse uses for spec 2.x as OpenShift does, takes such a path for one under the link and refuses
// the config ("uses link defined in config"); Ignition clients have no such check, so only
// reading our own 2.2 output back trips on it.
func linkPrefixQuirk(cfg ignition.Config) bool {
	for _, l := range cfg.Storage.Links {
		for _, p := range nodePaths(cfg) {
			if p != l.Path && strings.HasPrefix(p, l.Path) && !strings.HasPrefix(p, l.Path+"/") {
				return true
			}
		}
	}
	return false
}

// hasDiskLayout says whether cfg lays out disks (disks, RAID, filesystems, LUKS). Parse reads
// spec 2.x through ign-converter as OpenShift does, and that path refuses every spec 2.2
// partition (translated to 2.3, its size and start are deprecated fields the 3.0 translation
// rejects); Ignition clients read them, so only reading our own 2.2 output back trips on it.
func hasDiskLayout(cfg ignition.Config) bool {
	st := cfg.Storage
	return len(st.Disks)+len(st.Raid)+len(st.Filesystems)+len(st.Luks) > 0
}

// nodePaths lists the paths of cfg's files, directories and links.
func nodePaths(cfg ignition.Config) []string {
	var paths []string
	for _, f := range cfg.Storage.Files {
		paths = append(paths, f.Path)
	}
	for _, d := range cfg.Storage.Directories {
		paths = append(paths, d.Path)
	}
	for _, l := range cfg.Storage.Links {
		paths = append(paths, l.Path)
	}
	return paths
}
