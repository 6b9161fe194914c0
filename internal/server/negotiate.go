package server

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/go-semver/semver"

	"github.com/mco-dev/mco/internal/ignition"
)

// ignitionSubtype is the media subtype Ignition clients use to announce the spec they want.
const ignitionSubtype = "vnd.coreos.ignition+json"

// legacyVersion is served when the client does not say which spec it wants: spec 2 clients
// (RHCOS 4.1-4.5) send no usable version, and curl sends no Ignition entry at all.
var legacyVersion = ignition.V2_2

// ErrUnsupportedVersion marks an Accept header that names an Ignition spec we cannot serve
// (2.0/2.1, another major, or an unparseable version); the handler answers 400.
var ErrUnsupportedVersion = errors.New("unsupported Ignition version in Accept header")

// NegotiateVersion picks the Ignition spec version to serve for an Accept header, exactly as
// OpenShift's server does so existing clients keep working:
//   - media ranges are ordered by q (descending, stable); the first vnd.coreos.ignition+json
//     range with a version parameter decides;
//   - 2.x with x >= 2 → 2.2.0; 2.0 and 2.1 → error;
//   - 3.N → 3.N.0, or the newest servable 3.x when N is newer than we know;
//   - any other major, or an unparseable version → error;
//   - no such range (no header, curl's */*, a malformed header) → 2.2.0.
//
// 3.0.0 is returned as is: it is a real spec but has no down-conversion path, so serving it
// fails later with a 500, as in the original.
func NegotiateVersion(accept string) (semver.Version, error) {
	for _, r := range parseAccept(accept) {
		if r.subtype != ignitionSubtype || r.version == "" {
			continue
		}
		return pickVersion(r.version)
	}
	return legacyVersion, nil
}

func pickVersion(raw string) (semver.Version, error) {
	v, err := ignition.ParseLooseVersion(raw)
	if err != nil {
		return semver.Version{}, fmt.Errorf("%w: %q: %v", ErrUnsupportedVersion, raw, err)
	}
	switch v.Major {
	case 2:
		if v.Minor < 2 {
			return semver.Version{}, fmt.Errorf("%w: %s (spec 2 clients must ask for 2.2 or newer)", ErrUnsupportedVersion, raw)
		}
		return legacyVersion, nil
	case 3:
		if v.Minor > newestV3.Minor {
			return newestV3, nil
		}
		return semver.Version{Major: 3, Minor: v.Minor}, nil
	default:
		return semver.Version{}, fmt.Errorf("%w: %s", ErrUnsupportedVersion, raw)
	}
}

// newestV3 is the newest spec Convert can produce.
var newestV3 = func() semver.Version {
	newest := semver.Version{Major: 3}
	for _, v := range ignition.ServableVersions {
		if v.Major == 3 && v.Minor > newest.Minor {
			newest = v
		}
	}
	return newest
}()

type mediaRange struct {
	subtype string
	version string
	q       float64
}

// parseAccept splits an Accept header into media ranges sorted by q, highest first, keeping
// header order among equals. Ranges with q=0 (explicitly unacceptable) or a malformed q or
// media type are dropped, so a broken header degrades to "no preference".
func parseAccept(accept string) []mediaRange {
	var ranges []mediaRange
	for _, item := range strings.Split(accept, ",") {
		params := strings.Split(item, ";")
		mediaType := strings.ToLower(strings.TrimSpace(params[0]))
		_, subtype, ok := strings.Cut(mediaType, "/")
		if !ok || subtype == "" {
			continue
		}
		r := mediaRange{subtype: subtype, q: 1}
		valid := true
		for _, p := range params[1:] {
			key, value, _ := strings.Cut(p, "=")
			key = strings.ToLower(strings.TrimSpace(key))
			value = strings.Trim(strings.TrimSpace(value), `"`)
			switch key {
			case "version":
				r.version = value
			case "q":
				q, err := strconv.ParseFloat(value, 64)
				if err != nil || q < 0 || q > 1 {
					valid = false
				}
				r.q = q
			}
		}
		if valid && r.q > 0 {
			ranges = append(ranges, r)
		}
	}
	slices.SortStableFunc(ranges, func(a, b mediaRange) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	return ranges
}
