package ignition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// Parse is ParseWithWarnings for callers that have nobody to tell about warnings: the agent
// and the server read rendered configs, which carry none.
func Parse(raw []byte) (Config, error) {
	cfg, _, err := ParseWithWarnings(raw)
	return cfg, err
}

// ParseWithWarnings reads a raw Ignition config of any accepted spec version (2.0–2.2 and
// 3.0–3.5) in JSON or YAML and returns it as spec 3.5, as Ignition (and so OpenShift) reads it,
// with what Ignition only warns about: a key no field takes is left out of the config, and a
// key differing from a field's name only in case is read as that field. An empty input is the
// empty config, as in a MachineConfig that only sets kernel arguments.
//
// What Ignition refuses is an error: invalid JSON (data after the config included), a type
// mismatch, an invalid value, an unsupported version. So is, stricter than Ignition, which
// silently keeps the last: a key given twice in one object (or twice in case variants of one
// field), a second YAML document, and a config over MaxConfigSize.
func ParseWithWarnings(raw []byte) (Config, []Warning, error) {
	if len(raw) > MaxConfigSize {
		return Config{}, nil, sizeError(len(raw))
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return Empty(), nil, nil
	}
	if raw[0] != '{' {
		js, err := yamlToJSON(raw)
		if err != nil {
			return Config{}, nil, err
		}
		if len(js) > MaxConfigSize {
			return Config{}, nil, sizeError(len(js))
		}
		raw = js
	}
	if cfg, ok := parseCanonicalFast(raw); ok {
		return cfg, nil, nil
	}
	dups := duplicateKeys(raw)
	version, rpt, err := util.GetConfigVersion(raw)
	if err != nil {
		problems, _ := reportProblems(raw, rpt, "")
		problems = append(problems, dups...)
		if len(problems) == 0 {
			problems = []FieldError{versionProblem(raw, err)}
		}
		return Config{}, nil, &ConfigError{Problems: problems}
	}
	switch version.Major {
	case 3:
		cfg, rpt, err := v3_5.ParseCompatibleVersion(raw)
		problems, warnings := reportProblems(raw, rpt, version.String())
		if problems = append(problems, dups...); err != nil || len(problems) > 0 {
			return Config{}, warnings, failed(problems, err)
		}
		cfg, err = validCanonical(cfg, nil)
		return cfg, warnings, err
	case 2:
		cfg, warnings, err := parseV2(raw, version)
		if err == nil && len(dups) > 0 {
			err = &ConfigError{Problems: dups}
		}
		cfg, err = validCanonical(cfg, err)
		return cfg, warnings, err
	default:
		return Config{}, nil, &ConfigError{Problems: []FieldError{{Path: "ignition.version", Reason: fmt.Sprintf("unsupported Ignition spec version %s (want 2.2 or 3.0–%s)", version, CanonicalVersion)}}}
	}
}

// validCanonical checks a config translated up from an older spec as spec 3.5: the library
// validates only in the spec the config was written in, and a field that spec let be empty may
// be one 3.5 requires (a spec 3.0 link without a target).
func validCanonical(cfg Config, err error) (Config, error) {
	if err != nil {
		return Config{}, err
	}
	if !fatalInValidation(&cfg) {
		return cfg, nil
	}
	problems, _ := reportProblems(nil, validate.ValidateWithContext(cfg, nil), "")
	return Config{}, failed(problems, nil)
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
func parseV2(raw []byte, version semver.Version) (Config, []Warning, error) {
	var cfg22 ign22types.Config
	var rpt v2report.Report
	var err error
	switch {
	case version == V2_2:
		cfg22, rpt, err = parseV22(raw)
	case len(raw) > maxLegacySize:
		return Config{}, nil, &ConfigError{Problems: []FieldError{{Path: "ignition.version", Reason: fmt.Sprintf(
			"spec %s configs are read up to %d bytes and this one is %d; write it in spec 2.2 or 3.x", version, maxLegacySize, len(raw))}}}
	default:
		cfg22, rpt, err = ignv2_2.Parse(raw)
	}
	problems, warnings := v2Problems(raw, rpt)
	if err != nil || len(problems) > 0 {
		if len(problems) == 0 {
			problems = v2TypeProblems(raw)
		}
		if len(problems) == 0 {
			problems = []FieldError{{Reason: "spec 2.x: " + err.Error()}}
		}
		return Config{}, warnings, &ConfigError{Problems: problems}
	}
	cfg23, err := v22tov30.RemoveDuplicateFilesUnitsUsers(ignv2_3.Translate(cfg22))
	if err != nil {
		return Config{}, warnings, &ConfigError{Problems: []FieldError{{Reason: "spec 2.x: " + err.Error()}}}
	}
	for _, fs := range cfg23.Storage.Filesystems {
		if fs.Name != "root" {
			return Config{}, warnings, &ConfigError{Problems: []FieldError{{Path: "storage.filesystems", Reason: fmt.Sprintf("spec 2.x filesystem %q: only \"root\" can be converted", fs.Name)}}}
		}
	}
	cfg30, err := v22tov30.Translate(cfg23, map[string]string{"root": "/"})
	if err != nil {
		return Config{}, warnings, &ConfigError{Problems: []FieldError{{Reason: "converting spec 2.x to 3.0: " + err.Error()}}}
	}
	js, err := json.Marshal(cfg30)
	if err != nil {
		return Config{}, warnings, err
	}
	cfg, rpt3, err := v3_5.ParseCompatibleVersion(js)
	if err != nil {
		problems, _ := reportProblems(js, rpt3, "")
		return Config{}, warnings, failed(problems, err)
	}
	return cfg, warnings, nil
}

// v2Problems are the errors of a spec 2.x report, and what became of the keys it found
// unrecognised (warnings, unless two set one field), each located by its position, since the
// 2.x library reports no field paths.
func v2Problems(raw []byte, rpt v2report.Report) ([]FieldError, []Warning) {
	var problems problemList
	var unknown []FieldError
	for _, e := range rpt.Entries {
		key, isUnknown := strings.CutPrefix(e.Message, v2UnknownKey)
		fe := FieldError{Line: int64(e.Line), Column: int64(e.Column), Reason: e.Message}
		switch {
		case e.Kind == v2report.EntryWarning && isUnknown:
			fe.Reason = key
			unknown = append(unknown, fe)
		case e.Kind == v2report.EntryError:
			// Locating a problem walks the config: past the bound, problems are only counted.
			if !problems.full() {
				fe.Path = v2PathAt(raw, fe)
			}
			problems.add(raw, fe)
		}
	}
	// In position order, so the same config always gets the same first maxWarnings.
	slices.SortStableFunc(unknown, byPosition)
	var warnings warningList
	judge := newKeyJudge(raw, "2.x")
	for _, fe := range unknown {
		if warnings.full() {
			warnings.more++ // not located, nor checked for a twin: that would walk the config again
			continue
		}
		var parent []string
		if p := v2PathAt(raw, fe); p != "" {
			parent = strings.Split(p, ".")
		}
		verdict := judge.judge(parent, fe.Reason, fe.Line, fe.Column)
		if verdict.warning != nil {
			warnings.add(*verdict.warning)
		} else {
			problems.add(raw, *verdict.problem)
		}
	}
	return problems.result(), warnings.result()
}

// v2PathAt names what a 2.x report entry is about: its position is just past the value (or,
// for an unknown key, the key), so one byte back is inside it (the key's object, for a key).
func v2PathAt(raw []byte, fe FieldError) string {
	return pathAt(raw, offsetOf(raw, fe.Line, fe.Column)-1)
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
