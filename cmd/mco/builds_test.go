package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRoleBuildsLinkOnlyTheirRole checks that the node and server builds (Makefile's bin/mco-node
// and bin/mco-server) do not link the packages of the other roles: one import of the
// controller's package from a file every build compiles would bring back every package it
// initialises at start, and the memory those builds exist to save.
func TestRoleBuildsLinkOnlyTheirRole(t *testing.T) {
	const mod = "github.com/mco-dev/mco/internal/"
	for _, b := range []struct {
		tag       string
		wants     []string
		forbidden []string
	}{
		{"nodeagent", []string{"daemon"}, []string{"controller", "server", "devcluster", "explain", "diagnose"}},
		{"mcoserver", []string{"server"}, []string{"controller", "daemon", "devcluster", "explain", "diagnose", "nodesim"}},
	} {
		out, err := exec.Command("go", "list", "-deps", "-tags", b.tag, ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps -tags %s: %v\n%s", b.tag, err, out)
		}
		deps := strings.Fields(string(out))
		for _, w := range b.wants {
			if !slices.Contains(deps, mod+w) {
				t.Errorf("the %s build does not link %s%s: is the tag still what it builds by?", b.tag, mod, w)
			}
		}
		for _, f := range b.forbidden {
			for _, d := range deps {
				if d == mod+f || strings.HasPrefix(d, mod+f+"/") {
					t.Errorf("the %s build links %s", b.tag, d)
				}
			}
		}
	}
}
