package ignition

import (
	"bytes"
	"encoding/json"

	sigsjson "sigs.k8s.io/json"
)

// parseCanonicalFast handles the common case, a valid spec 3.5 config, in one JSON decode and
// one validation walk. The library's full path decodes twice more (for the version and for
// line/column context) and walks a third time for unknown keys, which only yields warnings;
// on a render of 200 MachineConfigs that was most of the time. ok=false means "not the easy
// case": the caller takes the full path, which also produces the positioned errors and the
// warnings.
//
// The decode is strict: data after the config, a key given twice, and any key no field takes
// by exact name are not the easy case. The last matters beyond the warning: this decoder
// matches keys case-sensitively, Ignition's ignoring case, so only a config without such keys
// decodes the same in both.
func parseCanonicalFast(raw []byte) (cfg Config, ok bool) {
	if !declaresVersion(raw, CanonicalVersion.String()) {
		return Config{}, false
	}
	strict, err := sigsjson.UnmarshalStrict(raw, &cfg)
	if err != nil || len(strict) > 0 || cfg.Ignition.Version != CanonicalVersion.String() {
		return Config{}, false
	}
	if fatalInValidation(&cfg) {
		return Config{}, false
	}
	return cfg, true
}

// declaresVersion reports whether raw's ignition.version is version, reading tokens only as far
// as needed: configs written by tools put "ignition" first.
func declaresVersion(raw []byte, version string) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		if key != "ignition" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
			continue
		}
		var ign struct {
			Version string `json:"version"`
		}
		if dec.Decode(&ign) != nil {
			return false
		}
		return ign.Version == version
	}
	return false
}
