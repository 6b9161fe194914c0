package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRoleBuildsLinkOnlyTheirRole checks that the builds the image holds (Makefile's
// bin/mco-controller, bin/mco-node and bin/mco-server) do not link the packages of the other
// roles, the CLI's views or the dev harness (internal/dev): one import of the
// controller's package from a file every build compiles would bring back every package it
// initialises at start, and the memory those builds exist to save.
func TestRoleBuildsLinkOnlyTheirRole(t *testing.T) {
	const mod = "github.com/mco-dev/mco/internal/"
	for _, b := range []struct {
		tag       string
		wants     []string
		forbidden []string
		// allowed are packages under forbidden ones the build may link, each with its reason.
		allowed []string
	}{
		// The dev platform's facts agent (afterburn's part on a cloud) runs on every dev
		// machine at boot as `mco-node dev platform-facts`; a leaf of the standard library.
		{"nodeagent", []string{"daemon"}, []string{"controller", "server", "dev", "explain", "diagnose", "statusview", "testenv"},
			[]string{"dev/machine/metadata"}},
		{"mcoserver", []string{"server"}, []string{"controller", "daemon", "dev", "explain", "diagnose", "statusview", "testenv"}, nil},
		{"mcocontroller", []string{"controller"}, []string{"server", "dev", "explain", "diagnose", "statusview", "testenv"}, nil},
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
				if (d == mod+f || strings.HasPrefix(d, mod+f+"/")) && !slices.Contains(b.allowed, strings.TrimPrefix(d, mod)) {
					t.Errorf("the %s build links %s", b.tag, d)
				}
			}
		}
	}
}
