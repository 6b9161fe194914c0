package ignition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coreos/go-semver/semver"
	v22tov30 "github.com/coreos/ign-converter/translate/v23tov30"
	ignv2_2 "github.com/coreos/ignition/config/v2_2"
	ign22types "github.com/coreos/ignition/config/v2_2/types"
	ignv2_3 "github.com/coreos/ignition/config/v2_3"
	v2report "github.com/coreos/ignition/config/validate/report"
	"github.com/coreos/ignition/v2/config/util"
	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/ignition/v2/config/validate"
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
//
// Parse is stricter than Ignition, which only warns: an unknown key, a key given twice, data
// after the config and a config over MaxConfigSize are errors, since each means part of what
// the author wrote would be silently dropped (or is not a config at all).
func Parse(raw []byte) (Config, error) {
	if len(raw) > MaxConfigSize {
		return Config{}, sizeError(len(raw))
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return Empty(), nil
	}
	if raw[0] != '{' {
		js, err := yamlToJSON(raw)
		if err != nil {
			return Config{}, err
		}
		if len(js) > MaxConfigSize {
			return Config{}, sizeError(len(js))
		}
		raw = js
	}
	if cfg, ok := parseCanonicalFast(raw); ok {
		return cfg, nil
	}
	dups := duplicateKeys(raw)
	version, rpt, err := util.GetConfigVersion(raw)
	if err != nil {
		problems := append(reportProblems(raw, rpt, ""), dups...)
		if len(problems) == 0 {
			problems = []FieldError{versionProblem(raw, err)}
		}
		return Config{}, &ConfigError{Problems: problems}
	}
	switch version.Major {
	case 3:
		cfg, rpt, err := v3_5.ParseCompatibleVersion(raw)
		if problems := append(reportProblems(raw, rpt, version.String()), dups...); err != nil || len(problems) > 0 {
			return Config{}, failed(problems, err)
		}
		return validCanonical(cfg, nil)
	case 2:
		cfg, err := parseV2(raw, version)
		if err == nil && len(dups) > 0 {
			err = &ConfigError{Problems: dups}
		}
		return validCanonical(cfg, err)
	default:
		return Config{}, &ConfigError{Problems: []FieldError{{Path: "ignition.version", Reason: fmt.Sprintf("unsupported Ignition spec version %s (want 2.2 or 3.0–%s)", version, CanonicalVersion)}}}
	}
}

// validCanonical checks a config translated up from an older spec as spec 3.5: the library
// validates only in the spec the config was written in, and a field that spec let be empty may
// be one 3.5 requires (a spec 3.0 link without a target).
func validCanonical(cfg Config, err error) (Config, error) {
	if err != nil {
		return Config{}, err
	}
	if rpt := validate.ValidateWithContext(cfg, nil); rpt.IsFatal() {
		return Config{}, failed(reportProblems(nil, rpt, CanonicalVersion.String()), nil)
	}
	return cfg, nil
}

// versionProblem says what is wrong with ignition.version in words an admin can act on.
func versionProblem(raw []byte, err error) FieldError {
	var probe struct {
		Ignition struct {
			Version *string `json:"version"`
		} `json:"ignition"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Ignition.Version == nil {
		return FieldError{Path: "ignition.version", Reason: "missing"}
	}
	return FieldError{Path: "ignition.version", Reason: err.Error()}
}

// parseV2 takes the path OpenShift takes, so old MachineConfigs render the same: parse as 2.2
// (which up-translates 2.0/2.1), lift to 2.3, drop duplicate files/units/users keeping the last,
// translate to 3.0 with the "root" filesystem at /, then up to 3.5.
func parseV2(raw []byte, version semver.Version) (Config, error) {
	var cfg22 ign22types.Config
	var rpt v2report.Report
	var err error
	switch {
	case version == V2_2:
		cfg22, rpt, err = parseV22(raw)
	case len(raw) > maxLegacySize:
		return Config{}, &ConfigError{Problems: []FieldError{{Path: "ignition.version", Reason: fmt.Sprintf(
			"spec %s configs are read up to %d bytes and this one is %d; write it in spec 2.2 or 3.x", version, maxLegacySize, len(raw))}}}
	default:
		cfg22, rpt, err = ignv2_2.Parse(raw)
	}
	if problems := v2Problems(raw, rpt); err != nil || len(problems) > 0 {
		if len(problems) == 0 {
			problems = v2TypeProblems(raw)
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
		return Config{}, failed(reportProblems(js, rpt3, ""), err)
	}
	return cfg, nil
}

// v2Problems are the errors of a spec 2.x report and the keys it found unrecognised, each
// located by its position, since the 2.x library reports no field paths.
func v2Problems(raw []byte, rpt v2report.Report) []FieldError {
	var problems problemList
	for _, e := range rpt.Entries {
		unknownKey, isUnknown := strings.CutPrefix(e.Message, v2UnknownKey)
		if e.Kind != v2report.EntryError && (e.Kind != v2report.EntryWarning || !isUnknown) {
			continue
		}
		if problems.full() {
			problems.more++
			continue
		}
		fe := FieldError{Line: int64(e.Line), Column: int64(e.Column), Reason: e.Message}
		// The position is just past the value (or, for an unknown key, the key): one byte
		// back is inside it.
		fe.Path = pathAt(raw, offsetOf(raw, fe.Line, fe.Column)-1)
		if e.Kind == v2report.EntryWarning {
			fe.Path, fe.Reason = join(fe.Path, unknownKey), unknownKeyReason(unknownKey, "2.x")
		}
		problems.list = append(problems.list, fe)
	}
	return problems.result()
}

// v2UnknownKey starts the 2.x library's warning about a key it does not know.
const v2UnknownKey = "Config has unrecognized key: "

// v2TypeProblems explains a spec 2.x config that does not decode: the 2.x library then tries
// each older spec in turn and reports only that the version is unsupported.
func v2TypeProblems(raw []byte) []FieldError {
	var cfg ign22types.Config
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, &cfg); !errors.As(err, &te) {
		return nil
	}
	reason, ok := typeReason(te.Error())
	if !ok {
		reason = te.Error()
	}
	return []FieldError{{Path: pathOfMismatch(raw, te.Offset), Reason: reason}}
}

// MustVersion parses a spec version known at compile time.
func MustVersion(v string) semver.Version {
	return *semver.New(v)
}
