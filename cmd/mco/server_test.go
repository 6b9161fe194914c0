//go:build !nodeagent && !nodev

package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestServerHelpDocumentsEveryFlag(t *testing.T) {
	cmd := newServerCommand()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.TrimSpace(f.Usage) == "" || !strings.Contains(out.String(), "--"+f.Name) {
			t.Errorf("flag --%s is not documented in --help", f.Name)
		}
	})
}

// Serving without tokens is never the default, and its help says what it gives away.
func TestServerAllowUnauthenticatedFlag(t *testing.T) {
	cmd := newServerCommand()
	f := cmd.Flags().Lookup("allow-unauthenticated")
	if f == nil {
		t.Fatal("no --allow-unauthenticated")
	}
	if f.DefValue != "false" {
		t.Errorf("--allow-unauthenticated defaults to %s", f.DefValue)
	}
	if !strings.Contains(f.Usage, "bootstrap kubeconfig") || !strings.Contains(f.Usage, "anyone who can reach the port") {
		t.Errorf("--allow-unauthenticated help does not say what it serves to whom: %q", f.Usage)
	}
	for _, want := range []string{"403", "--allow-unauthenticated", "mcs_config_requests_refused_total", "no-token-configured"} {
		if !strings.Contains(cmd.Long, want) {
			t.Errorf("server help does not mention %s", want)
		}
	}
}
