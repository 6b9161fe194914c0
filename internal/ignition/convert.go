package ignition

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/go-semver/semver"
	"github.com/coreos/ign-converter/translate/v32tov22"
	"github.com/coreos/ign-converter/translate/v32tov31"
	"github.com/coreos/ign-converter/translate/v33tov32"
	"github.com/coreos/ign-converter/translate/v34tov33"
	"github.com/coreos/ign-converter/translate/v35tov34"
)

// Supported spec versions a canonical config can be served as, newest first.
var (
	V3_5 = MustVersion("3.5.0")
	V3_4 = MustVersion("3.4.0")
	V3_3 = MustVersion("3.3.0")
	V3_2 = MustVersion("3.2.0")
	V3_1 = MustVersion("3.1.0")
	V2_2 = MustVersion("2.2.0")

	ServableVersions = []semver.Version{V3_5, V3_4, V3_3, V3_2, V3_1, V2_2}
)

// ServableList names ServableVersions, newest first, for messages.
func ServableList() string {
	names := make([]string, len(ServableVersions))
	for i, v := range ServableVersions {
		names[i] = v.String()
	}
	return strings.Join(names, ", ")
}

// IsServable reports whether Convert can produce spec v.
func IsServable(v semver.Version) bool {
	return slices.Contains(ServableVersions, v)
}

// ParseLooseVersion reads a spec version as people and clients write it: "3", "3.4" or
// "3.4.0", pre-release and build tags allowed and dropped. Ignition clients have sent each
// form in Accept headers.
func ParseLooseVersion(raw string) (semver.Version, error) {
	core := raw
	if i := strings.IndexAny(core, "-+"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return semver.Version{}, errors.New("too many components")
	}
	var nums [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return semver.Version{}, fmt.Errorf("component %q is not a number", p)
		}
		nums[i] = n
	}
	return semver.Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// Convert returns cfg as a JSON document of spec target. Going down fails, naming the spec, when
// the config uses something the older spec cannot express.
func Convert(cfg Config, target semver.Version) ([]byte, error) {
	out, err := convert(cfg, target)
	if err != nil {
		return nil, fmt.Errorf("converting Ignition config to spec %s: %w", target, err)
	}
	return json.Marshal(out)
}

// OldestServableAfter is the oldest servable spec newer than target that can express cfg: the
// one to suggest when converting cfg down to target failed.
func OldestServableAfter(cfg Config, target semver.Version) (semver.Version, bool) {
	for _, v := range slices.Backward(ServableVersions) {
		if target.LessThan(v) {
			if _, err := Convert(cfg, v); err == nil {
				return v, true
			}
		}
	}
	return semver.Version{}, false
}

// The chain mirrors the converters that exist: 3.5→3.4→3.3→3.2, then 3.2→3.1 or 3.2→2.2.
func convert(cfg Config, target semver.Version) (any, error) {
	if target == V3_5 {
		return cfg, nil
	}
	if !IsServable(target) {
		return nil, fmt.Errorf("spec %s is not supported (supported: %s)", target, ServableList())
	}
	c34, err := v35tov34.Translate(cfg)
	if err != nil || target == V3_4 {
		return c34, err
	}
	c33, err := v34tov33.Translate(c34)
	if err != nil || target == V3_3 {
		return c33, err
	}
	c32, err := v33tov32.Translate(c33)
	if err != nil || target == V3_2 {
		return c32, err
	}
	if target == V3_1 {
		return v32tov31.Translate(c32)
	}
	return v32tov22.Translate(c32)
}
