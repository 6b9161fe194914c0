//go:build !nodeagent && !mcoserver && !nodev

package main

import "testing"

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
