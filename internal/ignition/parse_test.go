package ignition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseEveryAcceptedSpec(t *testing.T) {
	file3 := `"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}`
	for _, tc := range []struct {
		name, raw string
	}{
		{"2.0", `{"ignition":{"version":"2.0.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}}`},
		{"2.1", `{"ignition":{"version":"2.1.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}}`},
		{"2.2", `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]}}`},
		{"3.0", `{"ignition":{"version":"3.0.0"},` + file3 + `}`},
		{"3.1", `{"ignition":{"version":"3.1.0"},` + file3 + `}`},
		{"3.2", `{"ignition":{"version":"3.2.0"},` + file3 + `}`},
		{"3.3", `{"ignition":{"version":"3.3.0"},` + file3 + `}`},
		{"3.4", `{"ignition":{"version":"3.4.0"},` + file3 + `}`},
		{"3.5", `{"ignition":{"version":"3.5.0"},` + file3 + `}`},
		{"3.5 with ignition not first", `{` + file3 + `,"ignition":{"version":"3.5.0"}}`},
		{"yaml", "ignition:\n  version: 3.4.0\nstorage:\n  files:\n  - path: /etc/x\n    mode: 420\n    contents:\n      source: data:,hello\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Ignition.Version != "3.5.0" {
				t.Errorf("version %s, want canonical 3.5.0", cfg.Ignition.Version)
			}
			if len(cfg.Storage.Files) != 1 || cfg.Storage.Files[0].Path != "/etc/x" || *cfg.Storage.Files[0].Contents.Source != "data:,hello" || *cfg.Storage.Files[0].Mode != 420 {
				t.Errorf("file not carried over: %+v", cfg.Storage.Files)
			}
		})
	}
}

func TestParseEmptyIsTheEmptyConfig(t *testing.T) {
	for _, raw := range []string{"", "  ", "null", "{}"} {
		cfg, err := Parse([]byte(raw))
		if err != nil || cfg.Ignition.Version != "3.5.0" {
			t.Errorf("Parse(%q) = %+v, %v", raw, cfg, err)
		}
	}
}

func TestSpec2DuplicatesKeepTheLast(t *testing.T) {
	cfg, err := Parse([]byte(`{"ignition":{"version":"2.2.0"},"storage":{"files":[
		{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,first"}},
		{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,last"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Storage.Files) != 1 || *cfg.Storage.Files[0].Contents.Source != "data:,last" {
		t.Fatalf("files = %+v", cfg.Storage.Files)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"relative path has field and position", "{\n\"ignition\":{\"version\":\"3.5.0\"},\n\"storage\":{\"files\":[{\"path\":\"etc/x\"}]}}", []string{"storage.files.0.path", "line 3"}},
		{"wrong type has position", "{\"ignition\":{\"version\":\"3.4.0\"},\n\"storage\":{\"files\":[{\"path\":\"/etc/x\",\"mode\":\"rw\"}]}}", []string{"line 2"}},
		{"unsupported major", `{"ignition":{"version":"4.0.0"}}`, []string{"version"}},
		{"spec 2.3 is not accepted", `{"ignition":{"version":"2.3.0"}}`, []string{"2.x"}},
		{"missing version", `{"storage":{}}`, []string{"ignition.version: missing"}},
		{"not a config", `[1,2]`, []string{"got a list, want an object"}},
		{"data after a 3.5 config (the fast path once took it)", `{"ignition":{"version":"3.5.0"}} garbage`, []string{"after top-level value"}},
		{"a second value after a 3.5 config", `{"ignition":{"version":"3.5.0"}}{"storage":{}}`, []string{"after top-level value"}},
		{"key given twice", `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/a","path":"/b"}]}}`, []string{"storage.files.0.path", "more than once"}},
		{"key given twice, once in another case", `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/a","Path":"/b"}]}}`, []string{"storage.files.0.Path", `keys "Path", "path" all set path`}},
		{"key given twice in case variants only", `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"PATH":"/a","Path":"/b"}]}}`, []string{"storage.files.0.P", `"PATH", "Path" all set path`}},
		{"spec 2 key given twice, once in another case", `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","Path":"/b"}]}}`, []string{"storage.files.0.Path", `keys "Path", "path" all set path`}},
		{"an ignored key does not hide a wrong type", `{"ignition":{"version":"3.2.0"},"networkd":{},"storage":{"files":[{"path":"/x","mode":"rw"}]}}`, []string{"storage.files.0.mode", "got a string, want an integer"}},
		{"type mismatch in spec 2", `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/x","mode":"rw"}]}}`, []string{"storage.files.0.mode", "got a string, want an integer"}},
		{"second YAML document", "ignition: {version: 3.5.0}\n---\nstorage: {}\n", []string{"more than one YAML document"}},
		{"over the size limit", `{"ignition":{"version":"3.5.0"},"x":"` + strings.Repeat("a", MaxConfigSize) + `"}`, []string{"over the 1572864 byte limit"}},
		{"spec 2 non-root filesystem", `{"ignition":{"version":"2.2.0"},"storage":{"filesystems":[{"name":"data","mount":{"device":"/dev/sdb","format":"xfs"}}],"files":[{"filesystem":"data","path":"/x","contents":{"source":"data:,"}}]}}`, []string{"non-root filesystem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.raw))
			if err == nil {
				t.Fatal("parsed")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, want *ConfigError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestConvertDown(t *testing.T) {
	cfg, err := Parse([]byte(`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,hello"},"mode":420}]},"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ServableVersions {
		t.Run(v.String(), func(t *testing.T) {
			out, err := Convert(cfg, v)
			if err != nil {
				t.Fatal(err)
			}
			var probe struct {
				Ignition struct{ Version string }
			}
			if err := json.Unmarshal(out, &probe); err != nil || probe.Ignition.Version != v.String() {
				t.Fatalf("converted config declares %q (%v)", probe.Ignition.Version, err)
			}
			back, err := Parse(out)
			if err != nil {
				t.Fatalf("converted config does not parse back: %v", err)
			}
			if len(back.Storage.Files) != 1 || *back.Storage.Files[0].Contents.Source != "data:,hello" || len(back.Systemd.Units) != 1 {
				t.Fatalf("content lost going through %s: %s", v, out)
			}
		})
	}
}

func TestConvertDownFailsClearlyOnNewerFeatures(t *testing.T) {
	// kernelArguments arrived in spec 3.3.
	cfg, err := Parse([]byte(`{"ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["quiet"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(cfg, V3_3); err != nil {
		t.Fatalf("3.3 has kernelArguments: %v", err)
	}
	// Convert names the target spec in every error; only the field name shows the converter
	// refused kernelArguments rather than failing for some other reason. ign-converter spells
	// it as the Go field: "KernelArguments is not supported on 3.2".
	_, err = Convert(cfg, V3_2)
	if err == nil || !strings.Contains(err.Error(), "KernelArguments") {
		t.Fatalf("want an error naming kernelArguments, got %v", err)
	}
	if _, err := Convert(cfg, MustVersion("3.0.0")); err == nil {
		t.Fatal("3.0.0 has no conversion path and must be refused")
	}
}

func TestParseLooseVersion(t *testing.T) {
	for raw, want := range map[string]string{
		"3": "3.0.0", "3.4": "3.4.0", "3.4.0": "3.4.0", "3.4.1-rc.1": "3.4.1", "2.2+build": "2.2.0",
	} {
		v, err := ParseLooseVersion(raw)
		if err != nil || v.String() != want {
			t.Errorf("ParseLooseVersion(%q) = %s, %v; want %s", raw, v, err, want)
		}
	}
	for _, raw := range []string{"", "x", "3.x", "3.4.0.1", "-1"} {
		if v, err := ParseLooseVersion(raw); err == nil {
			t.Errorf("ParseLooseVersion(%q) = %s, want an error", raw, v)
		}
	}
}

func TestConvertRefusalNamesServableVersions(t *testing.T) {
	_, err := Convert(Empty(), MustVersion("3.0.0"))
	if err == nil || !strings.Contains(err.Error(), ServableList()) {
		t.Fatalf("want the servable versions %s named, got %v", ServableList(), err)
	}
}
