package serverguard

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func prefixes(t *testing.T, list string) []netip.Prefix {
	t.Helper()
	p, err := ParsePrefixes(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlan(t *testing.T) {
	nodeAddrs := []netip.Addr{netip.MustParseAddr("10.87.0.11"), netip.MustParseAddr("fd00::11")}
	for _, tc := range []struct {
		name, networks string
		wantTags       []string
		wantErr        string
	}{
		{name: "one network, both ports", networks: "10.244.0.0/16",
			wantTags: []string{"mco:reject 10.244.0.0/16 tcp/22623", "mco:reject 10.244.0.0/16 tcp/22624"}},
		{name: "deduplicated, masked and sorted, IPv6 too", networks: "fd10::/48, 10.244.1.7/16,10.244.0.0/16",
			wantTags: []string{"mco:reject 10.244.0.0/16 tcp/22623", "mco:reject 10.244.0.0/16 tcp/22624",
				"mco:reject fd10::/48 tcp/22623", "mco:reject fd10::/48 tcp/22624"}},
		{name: "no network: refused, not reported in place", networks: "", wantErr: "no pod network is known"},
		{name: "a network holding the node's address", networks: "10.0.0.0/8", wantErr: "pod network 10.0.0.0/8 holds the node's own address 10.87.0.11"},
		{name: "everything", networks: "0.0.0.0/0", wantErr: "holds the node's own address 10.87.0.11"},
		{name: "an IPv6 network holding the node's address", networks: "fd00::/64", wantErr: "holds the node's own address fd00::11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Plan("worker-0", prefixes(t, tc.networks), nodeAddrs, []uint16{22624, 22623, 22623})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := spec.Tags(); !reflect.DeepEqual(got, tc.wantTags) {
				t.Errorf("tags %q, want %q", got, tc.wantTags)
			}
		})
	}
}

func TestChainNameFitsTheKernel(t *testing.T) {
	if got := ChainName("worker-0"); got != "prerouting-worker-0" {
		t.Errorf("ChainName(worker-0) = %q", got)
	}
	long := strings.Repeat("n", 253)
	a, b := ChainName(long), ChainName(long[:252]+"m")
	if len(a) > maxChainName || a == b {
		t.Fatalf("names %q (%d) and %q: want at most %d bytes and distinct", a, len(a), b, maxChainName)
	}
}

func TestParsePrefixesNamesTheBadEntry(t *testing.T) {
	if _, err := ParsePrefixes("10.244.0.0/16,10.245.0.0"); err == nil || !strings.Contains(err.Error(), `"10.245.0.0"`) {
		t.Fatalf("err = %v, want it to name 10.245.0.0", err)
	}
}
