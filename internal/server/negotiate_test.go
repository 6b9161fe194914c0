package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/ignition"
)

func TestNegotiateVersion(t *testing.T) {
	tests := []struct {
		name, accept string
		want         string // "" means an ErrUnsupportedVersion
	}{
		// The legacy default.
		{"no header", "", "2.2.0"},
		{"curl", "*/*", "2.2.0"},
		{"json only", "application/json", "2.2.0"},
		{"ignition without version", "application/vnd.coreos.ignition+json", "2.2.0"},
		{"malformed header", ";;;,,,=", "2.2.0"},
		{"garbage media type", "garbage", "2.2.0"},
		{"empty version skipped", "application/vnd.coreos.ignition+json;version=, */*", "2.2.0"},

		// Exact headers real clients send (test-infrastructure.md, mco-behaviour §5.3).
		{"spec 2 client (RHCOS 4.1-4.5)", "application/vnd.coreos.ignition+json; version=2.2.0, application/vnd.coreos.ignition+json; version=1; q=0.5, */*; q=0.1", "2.2.0"},
		{"old ignition asking 2.4", "application/vnd.coreos.ignition+json; version=2.4.0, application/vnd.coreos.ignition+json; version=1; q=0.5, */*; q=0.1", "2.2.0"},
		{"ignition v2.x asking 3.2", "application/vnd.coreos.ignition+json;version=3.2.0, */*;q=0.1", "3.2.0"},
		{"ignition v2.27 asking 3.6", "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1", "3.5.0"},

		// 2.x.
		{"2.2", "application/vnd.coreos.ignition+json;version=2.2.0", "2.2.0"},
		{"2.3", "application/vnd.coreos.ignition+json;version=2.3.0", "2.2.0"},
		{"2.0 refused", "application/vnd.coreos.ignition+json;version=2.0.0", ""},
		{"2.1 refused", "application/vnd.coreos.ignition+json;version=2.1.0", ""},

		// 3.x.
		{"3.0 has no conversion path but negotiates", "application/vnd.coreos.ignition+json;version=3.0.0", "3.0.0"},
		{"3.1", "application/vnd.coreos.ignition+json;version=3.1.0", "3.1.0"},
		{"3.3", "application/vnd.coreos.ignition+json;version=3.3.0", "3.3.0"},
		{"3.4", "application/vnd.coreos.ignition+json;version=3.4.0", "3.4.0"},
		{"3.5", "application/vnd.coreos.ignition+json;version=3.5.0", "3.5.0"},
		{"3.4 patch dropped", "application/vnd.coreos.ignition+json;version=3.4.2", "3.4.0"},
		{"3.99 gets newest", "application/vnd.coreos.ignition+json;version=3.99.0", "3.5.0"},
		{"experimental pre-release", "application/vnd.coreos.ignition+json;version=3.7.0-experimental", "3.5.0"},
		{"major.minor only", "application/vnd.coreos.ignition+json;version=3.4", "3.4.0"},
		{"quoted version", `application/vnd.coreos.ignition+json;version="3.3.0"`, "3.3.0"},
		{"spaces and case", "  Application/VND.CoreOS.Ignition+JSON ; Version = 3.1.0 ", "3.1.0"},

		// Refusals.
		{"4.0", "application/vnd.coreos.ignition+json;version=4.0.0", ""},
		{"1", "application/vnd.coreos.ignition+json;version=1", ""},
		{"unparseable", "application/vnd.coreos.ignition+json;version=banana", ""},
		{"too many parts", "application/vnd.coreos.ignition+json;version=3.1.0.0", ""},

		// q-values.
		{"higher q wins over order", "application/vnd.coreos.ignition+json;version=3.1.0;q=0.5, application/vnd.coreos.ignition+json;version=3.4.0;q=0.9", "3.4.0"},
		{"equal q keeps header order", "application/vnd.coreos.ignition+json;version=3.3.0;q=0.5, application/vnd.coreos.ignition+json;version=3.4.0;q=0.5", "3.3.0"},
		{"implicit q=1 beats 0.9", "application/vnd.coreos.ignition+json;version=3.4.0;q=0.9, application/vnd.coreos.ignition+json;version=3.2.0", "3.2.0"},
		{"q=0 is not acceptable", "application/vnd.coreos.ignition+json;version=3.4.0;q=0, application/vnd.coreos.ignition+json;version=3.2.0;q=0.1", "3.2.0"},
		{"bad q drops the range", "application/vnd.coreos.ignition+json;version=4.0.0;q=high, application/vnd.coreos.ignition+json;version=3.1.0;q=0.2", "3.1.0"},
		{"q above 1 drops the range", "application/vnd.coreos.ignition+json;version=4.0.0;q=2", "2.2.0"},
		{"refused version with top q decides", "application/vnd.coreos.ignition+json;version=2.0.0, application/vnd.coreos.ignition+json;version=3.4.0;q=0.5", ""},
		{"versionless ignition range skipped for later one", "application/vnd.coreos.ignition+json, application/vnd.coreos.ignition+json;version=3.3.0;q=0.4", "3.3.0"},
		{"other subtype with version ignored", "application/json;version=3.4.0, */*;q=0.1", "2.2.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NegotiateVersion(tc.accept)
			if tc.want == "" {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("NegotiateVersion(%q) = %v, %v; want ErrUnsupportedVersion", tc.accept, got, err)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("NegotiateVersion(%q) = %v, %v; want %s", tc.accept, got, err, tc.want)
			}
		})
	}
}

// FuzzNegotiateVersion checks, for any header: the answer is a version Convert can produce (or
// 3.0.0, which negotiates but has no conversion path, as documented) or ErrUnsupportedVersion;
// a header that names no Ignition media type gets the legacy 2.2.0; and ranges of other media
// types, before or after the header's own, never change the answer (clients list */* and
// application/json next to the Ignition type).
func FuzzNegotiateVersion(f *testing.F) {
	for _, seed := range []string{
		"", "*/*", "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1",
		"application/vnd.coreos.ignition+json; version=2.2.0, application/vnd.coreos.ignition+json; version=1; q=0.5, */*; q=0.1",
		"a/b;q=NaN;version=3.-1", "application/vnd.coreos.ignition+json;version=99999999999999999999.1",
		"application/vnd.coreos.ignition+json;version=3.4.0;q=0.9, application/vnd.coreos.ignition+json;version=3.2.0",
		`application/vnd.coreos.ignition+json;version="3.3.0";q=1e-3`, "APPLICATION/VND.COREOS.IGNITION+JSON;VERSION=3.1.0-rc.1+b",
	} {
		f.Add(seed)
	}
	const other = "application/json;version=3.1.0;q=0.7"
	f.Fuzz(func(t *testing.T, accept string) {
		v, err := NegotiateVersion(accept)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("NegotiateVersion(%q): unexpected error kind: %v", accept, err)
			}
		} else if !ignition.IsServable(v) && v != ignition.MustVersion("3.0.0") {
			t.Fatalf("NegotiateVersion(%q) = %v, which is not servable", accept, v)
		}
		if !strings.Contains(strings.ToLower(accept), ignitionSubtype) && (err != nil || v != legacyVersion) {
			t.Fatalf("NegotiateVersion(%q) = %v, %v; a header naming no Ignition type gets %v", accept, v, err, legacyVersion)
		}
		for _, wrapped := range []string{accept + ", " + other, other + "," + accept} {
			v2, err2 := NegotiateVersion(wrapped)
			if v2 != v || (err2 == nil) != (err == nil) {
				t.Fatalf("adding %q changed the answer: %q → %v, %v; %q → %v, %v", other, accept, v, err, wrapped, v2, err2)
			}
		}
	})
}
