//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/servingcert"
)

// The serving certificate controller is on exactly when it has names: --server-cert-names, else
// the host of --server-host; a bad name is an error naming the flag it came from.
func TestServingCertOptions(t *testing.T) {
	for _, tc := range []struct {
		list       []string
		serverHost string
		want       string // names; "" = controller off
		err        string
	}{
		{nil, "api-int.example.com:22623", "api-int.example.com", ""},
		{nil, "", "", ""},
		{[]string{"mcs.example.com", "10.0.0.5"}, "api-int.example.com:22623", "mcs.example.com,10.0.0.5", ""},
		{[]string{"mcs.example.com"}, "", "mcs.example.com", ""},
		{nil, "bad_host:22623", "", "--server-host"},
		{[]string{"bad name"}, "api-int.example.com", "", "--server-cert-names"},
	} {
		opts, err := servingCertOptions(tc.list, tc.serverHost, "ns", servingcert.DefaultPolicy())
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q, %q: error %v, want one naming %s", tc.list, tc.serverHost, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q, %q: %v", tc.list, tc.serverHost, err)
		case tc.want == "" && opts != nil:
			t.Errorf("%q, %q: controller on for %s, want off", tc.list, tc.serverHost, opts.Names)
		case tc.want != "" && (opts == nil || opts.Names.String() != tc.want || opts.Namespace != "ns"):
			t.Errorf("%q, %q: options %+v, want names %s", tc.list, tc.serverHost, opts, tc.want)
		}
	}
	bad := servingcert.DefaultPolicy()
	bad.Overlap = 5 * 365 * 24 * time.Hour
	if _, err := servingCertOptions(nil, "api-int.example.com", "ns", bad); err == nil || !strings.Contains(err.Error(), "--server-ca-overlap") {
		t.Errorf("an overlap longer than a CA's remaining life: %v", err)
	}
}

// The flags exist with their documented defaults.
func TestServingCertFlags(t *testing.T) {
	cmd := newControllerCommand()
	for name, want := range map[string]string{
		"server-cert-names": "[]", "manage-server-cert": "true",
		"server-cert-validity": "8760h0m0s", "server-ca-validity": "87600h0m0s", "server-ca-overlap": "24h0m0s",
	} {
		f := cmd.Flags().Lookup(name)
		if f == nil || f.DefValue != want {
			t.Errorf("--%s: %+v, want default %s", name, f, want)
		}
	}
}
