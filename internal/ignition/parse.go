package ignition

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/coreos/go-semver/semver"
	v22tov30 "github.com/coreos/ign-converter/translate/v23tov30"
	ignv2_2 "github.com/coreos/ignition/config/v2_2"
	ignv2_3 "github.com/coreos/ignition/config/v2_3"
	v2report "github.com/coreos/ignition/config/validate/report"
	"github.com/coreos/ignition/v2/config/util"
	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"sigs.k8s.io/yaml"
)

// Config is the canonical in-memory Ignition config: spec 3.5.
type Config = types.Config

// CanonicalVersion is the spec every config is converted to internally.
var CanonicalVersion = types.MaxVersion

// Empty returns a valid config that does nothing.
func Empty() Config {
	return Config{Ignition: types.Ignition{Version: CanonicalVersion.String()}}
}

// Parse reads a raw Ignition config of any accepted spec version (2.0–2.2 and 3.0–3.5) in JSON
// or YAML and returns it as spec 3.5. An empty input is the empty config, as in a MachineConfig
// that only sets kernel arguments.
func Parse(raw []byte) (Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return Empty(), nil
	}
	if raw[0] != '{' {
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return Config{}, &ConfigError{Problems: []FieldError{{Reason: "neither JSON nor YAML: " + err.Error()}}}
		}
		raw = js
	}
	if cfg, ok := parseCanonicalFast(raw); ok {
		return cfg, nil
	}
	version, rpt, err := util.GetConfigVersion(raw)
	if err != nil {
		return Config{}, fromReport(rpt, versionError(raw, err))
	}
	switch version.Major {
	case 3:
		cfg, rpt, err := v3_5.ParseCompatibleVersion(raw)
		if err != nil {
			return Config{}, fromReport(rpt, err)
		}
		return cfg, nil
	case 2:
		return parseV2(raw)
	default:
		return Config{}, &ConfigError{Problems: []FieldError{{Path: "ignition.version", Reason: fmt.Sprintf("unsupported Ignition spec version %s (want 2.2 or 3.0–%s)", version, CanonicalVersion)}}}
	}
}

// versionError says what is wrong with ignition.version in words an admin can act on.
func versionError(raw []byte, err error) error {
	var probe struct {
		Ignition struct {
			Version *string `json:"version"`
		} `json:"ignition"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Ignition.Version == nil {
		return fmt.Errorf("ignition.version: missing")
	}
	return fmt.Errorf("ignition.version: %w", err)
}

// parseV2 takes the path OpenShift takes, so old MachineConfigs render the same: parse as 2.2
// (which up-translates 2.0/2.1), lift to 2.3, drop duplicate files/units/users keeping the last,
// translate to 3.0 with the "root" filesystem at /, then up to 3.5.
func parseV2(raw []byte) (Config, error) {
	cfg22, rpt, err := ignv2_2.Parse(raw)
	if err != nil {
		var problems []FieldError
		for _, e := range rpt.Entries {
			if e.Kind == v2report.EntryError {
				problems = append(problems, FieldError{Line: int64(e.Line), Column: int64(e.Column), Reason: e.Message})
			}
		}
		if len(problems) == 0 {
			problems = []FieldError{{Reason: "spec 2.x: " + err.Error()}}
		}
		return Config{}, &ConfigError{Problems: problems}
	}
	cfg23, err := v22tov30.RemoveDuplicateFilesUnitsUsers(ignv2_3.Translate(cfg22))
	if err != nil {
		return Config{}, &ConfigError{Problems: []FieldError{{Reason: "spec 2.x: " + err.Error()}}}
	}
	for _, fs := range cfg23.Storage.Filesystems {
		if fs.Name != "root" {
			return Config{}, &ConfigError{Problems: []FieldError{{Path: "storage.filesystems", Reason: fmt.Sprintf("spec 2.x filesystem %q: only \"root\" can be converted", fs.Name)}}}
		}
	}
	cfg30, err := v22tov30.Translate(cfg23, map[string]string{"root": "/"})
	if err != nil {
		return Config{}, &ConfigError{Problems: []FieldError{{Reason: "converting spec 2.x to 3.0: " + err.Error()}}}
	}
	js, err := json.Marshal(cfg30)
	if err != nil {
		return Config{}, err
	}
	cfg, rpt3, err := v3_5.ParseCompatibleVersion(js)
	if err != nil {
		return Config{}, fromReport(rpt3, err)
	}
	return cfg, nil
}

// MustVersion parses a spec version known at compile time.
func MustVersion(v string) semver.Version {
	return *semver.New(v)
}
