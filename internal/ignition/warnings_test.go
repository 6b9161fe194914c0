package ignition

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
)

// TestParseWarnsWhereIgnitionWarns: what Ignition only warns about renders, with a warning
// naming the key, its path and position; the config is what Ignition's own parse (the one
// OpenShift's render calls) makes of it: an ignored key absent, a case variant read as its field.
func TestParseWarnsWhereIgnitionWarns(t *testing.T) {
	for _, tc := range []struct {
		name, raw    string
		path, key    string
		line, column int64
		reason       string
		check        func(t *testing.T, cfg Config)
	}{
		{name: "spec 2 networkd section in spec 3.2",
			raw:  "{\"ignition\":{\"version\":\"3.2.0\"},\n  \"networkd\":{\"units\":[{\"name\":\"10-eth0.network\",\"contents\":\"[Match]\"}]},\n\"storage\":{\"files\":[{\"path\":\"/etc/x\",\"contents\":{\"source\":\"data:,x\"}}]}}",
			path: "networkd", key: "networkd", line: 2, column: 3, reason: `unknown key "networkd" in spec 3.2.0: ignored`,
			check: func(t *testing.T, cfg Config) {
				if len(cfg.Storage.Files) != 1 || cfg.Storage.Files[0].Path != "/etc/x" {
					t.Errorf("the rest of the config was not kept: %+v", cfg.Storage.Files)
				}
			}},
		{name: "a file's filesystem: root in spec 3.2",
			raw:  `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,x"},"mode":420}]}}`,
			path: "storage.files.0.filesystem", key: "filesystem", line: 1, column: 54, reason: `unknown key "filesystem" in spec 3.2.0: ignored`,
			check: func(t *testing.T, cfg Config) {
				if len(cfg.Storage.Files) != 1 || *cfg.Storage.Files[0].Mode != 420 {
					t.Errorf("file not kept: %+v", cfg.Storage.Files)
				}
			}},
		{name: "misspelled key in spec 3.5",
			raw:  `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x","contentz":{"source":"data:,x"}}]}}`,
			path: "storage.files.0.contentz", key: "contentz", line: 1, column: 70, reason: `unknown key "contentz" in spec 3.5.0`,
			check: func(t *testing.T, cfg Config) {
				if cfg.Storage.Files[0].Contents.Source != nil {
					t.Errorf("contents came from a key Ignition ignores: %+v", cfg.Storage.Files[0].Contents)
				}
			}},
		{name: "field of a later spec",
			raw:  `{"ignition":{"version":"3.2.0"},"kernelArguments":{"shouldExist":["quiet"]}}`,
			path: "kernelArguments", key: "kernelArguments", line: 1, column: 33, reason: "a later spec has it",
			check: func(t *testing.T, cfg Config) {
				if len(cfg.KernelArguments.ShouldExist) != 0 {
					t.Errorf("a spec 3.2 config got kernel arguments: %+v", cfg.KernelArguments)
				}
			}},
		{name: "key differing from a field only in case is read as the field",
			raw:  `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"Path":"/etc/x"}]}}`,
			path: "storage.files.0.Path", key: "Path", line: 1, column: 54, reason: `key "Path" is read as "path"`,
			check: func(t *testing.T, cfg Config) {
				if len(cfg.Storage.Files) != 1 || cfg.Storage.Files[0].Path != "/etc/x" {
					t.Errorf("Path not read as path: %+v", cfg.Storage.Files)
				}
			}},
		{name: "a whole section in another case",
			raw:  `{"ignition":{"version":"3.5.0"},"Storage":{"files":[{"path":"/etc/x"}]}}`,
			path: "Storage", key: "Storage", line: 1, column: 33, reason: `read as "storage"`,
			check: func(t *testing.T, cfg Config) {
				if len(cfg.Storage.Files) != 1 {
					t.Errorf("Storage not read as storage: %+v", cfg.Storage)
				}
			}},
		{name: "YAML", raw: "ignition:\n  version: 3.4.0\nnetworkd: {}\n",
			path: "networkd", key: "networkd", reason: `unknown key "networkd" in spec 3.4.0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warnings, err := ParseWithWarnings([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 1 {
				t.Fatalf("warnings %+v, want one", warnings)
			}
			w := warnings[0]
			if w.Path != tc.path || w.Key != tc.key || !strings.Contains(w.Reason, tc.reason) {
				t.Errorf("warning %+v, want path %s, key %s, reason with %q", w, tc.path, tc.key, tc.reason)
			}
			if tc.line > 0 && (w.Line != tc.line || w.Column != tc.column) {
				t.Errorf("warning at line %d col %d, want %d:%d", w.Line, w.Column, tc.line, tc.column)
			}
			if strings.HasPrefix(tc.raw, "{") {
				want, _, err := v3_5.ParseCompatibleVersion([]byte(tc.raw))
				if err != nil {
					t.Fatalf("Ignition refuses it: %v", err)
				}
				if !reflect.DeepEqual(cfg, want) {
					t.Errorf("config differs from Ignition's parse:\n got %+v\nwant %+v", cfg, want)
				}
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
			if plain, err := Parse([]byte(tc.raw)); err != nil || !reflect.DeepEqual(plain, cfg) {
				t.Errorf("Parse differs from ParseWithWarnings: %v", err)
			}
		})
	}
}

func TestParseWarnsInSpec2(t *testing.T) {
	cfg, warnings, err := ParseWithWarnings([]byte(`{"ignition":{"version":"2.2.0"},"networkd":{"units":[]},"storage":{"files":[{"filesystem":"root","path":"/etc/x","Mode":420,"bogus":1}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.Path+": "+w.Reason)
	}
	want := []string{
		`storage.files.0.Mode: key "Mode" is read as "mode"`,
		`storage.files.0.bogus: unknown key "bogus" in spec 2.x: ignored`,
	}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %q, want it to start %q", got[i], want[i])
		}
	}
	if len(cfg.Storage.Files) != 1 || cfg.Storage.Files[0].Mode == nil || *cfg.Storage.Files[0].Mode != 420 {
		t.Fatalf("Mode not read as mode: %+v", cfg.Storage.Files)
	}
}

func TestCleanConfigsHaveNoWarnings(t *testing.T) {
	for _, raw := range []string{
		`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,x"}}]}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,x"}}]}}`,
		`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,x"}}]}}`,
	} {
		if _, warnings, err := ParseWithWarnings([]byte(raw)); err != nil || len(warnings) > 0 {
			t.Errorf("%s: warnings %+v, err %v", raw, warnings, err)
		}
	}
}

func TestWarningsAreBounded(t *testing.T) {
	var keys []string
	for i := range maxWarnings + 5 {
		keys = append(keys, fmt.Sprintf(`"unknown%02d":1`, i))
	}
	_, warnings, err := ParseWithWarnings([]byte(`{"ignition":{"version":"3.5.0"},` + strings.Join(keys, ",") + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != maxWarnings+1 || warnings[maxWarnings].Reason != "and 5 more warnings" {
		t.Fatalf("%d warnings, last %+v", len(warnings), warnings[len(warnings)-1])
	}
}

func TestWarningNamesAKeyHoldingADot(t *testing.T) {
	_, warnings, err := ParseWithWarnings([]byte(`{"ignition":{"version":"3.5.0"},"storage":{"files.0":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0].Key != "files.0" || warnings[0].Path != "storage.files.0" {
		t.Fatalf("warnings %+v, want key files.0 of storage", warnings)
	}
}

// deliberatelyStricter are the cases of testdata/openshift that OpenShift renders and mco
// refuses: a key given twice, whose last value OpenShift keeps without a word.
var deliberatelyStricter = map[string]string{
	"spec35-duplicate-key.json":  "more than once",
	"spec35-case-collision.json": `keys "Path", "path" all set path`,
}

// TestParseMatchesOpenShift: on the configs of testdata/openshift, what OpenShift's own parse
// (ctrlcommon.ParseAndConvertConfig) renders, mco renders identically, and what it refuses, mco
// refuses (see the README there).
func TestParseMatchesOpenShift(t *testing.T) {
	inputs, err := filepath.Glob("testdata/openshift/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, in := range inputs {
		if strings.Contains(in, ".openshift") {
			continue
		}
		seen++
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			cfg, warnings, err := ParseWithWarnings(raw)
			if want, ok := deliberatelyStricter[filepath.Base(in)]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err %v, want a refusal with %q", err, want)
				}
				return
			}
			golden, goldenErr := os.ReadFile(in + ".openshift.json")
			if _, refused := os.Stat(in + ".openshift-error.txt"); refused == nil {
				if err == nil {
					t.Fatalf("OpenShift refuses it, mco renders it: %+v", cfg)
				}
				return
			}
			if goldenErr != nil {
				t.Fatal(goldenErr)
			}
			if err != nil {
				t.Fatalf("OpenShift renders it, mco refuses: %v", err)
			}
			var want Config
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg, want) {
				got, _ := json.MarshalIndent(cfg, "", "  ")
				t.Errorf("config differs from OpenShift's:\n%s\nwant:\n%s", got, golden)
			}
			if len(warnings) == 0 {
				t.Error("no warning for what Ignition warns about")
			}
			for _, w := range warnings {
				t.Log(w)
			}
		})
	}
	if seen < 10 {
		t.Fatalf("%d cases in testdata/openshift", seen)
	}
}
