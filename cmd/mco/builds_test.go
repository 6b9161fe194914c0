package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
)

// TestRoleBuildsLinkOnlyTheirRole checks that the builds the image holds (Makefile's
// bin/image/mco, tag nodev, and bin/mco-node and bin/mco-server) link none of the dev harness
// (internal/dev), and the node's and the server's builds none of the other roles or the CLI's
// views: one import of the
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
		// The image's mco: the controller and the CLI (an admin may run it in a pod), not the
		// dev harness.
		{"nodev", []string{"controller", "statusview"}, []string{"dev", "diagnose", "testenv"}, nil},
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

// TestFailpointsOnlyInTestBuilds: the agent's failpoints (a SIGKILL, pause or hold that anyone
// who can write the node's /run could arm) are compiled only into test builds. The release node
// build (Makefile's build, image and demo, the Containerfile) compiles the no-op file and passes
// no failpoints tag; make test's and make chaos's node build, whose image the suites arm,
// compiles the real one, and their go test, like make unit's, the tests that arm them.
func TestFailpointsOnlyInTestBuilds(t *testing.T) {
	const pkg = "github.com/mco-dev/mco/internal/daemon/failpoint"
	on, off := "failpoint_on.go", "failpoint_off.go"
	for tags, want := range map[string]string{
		"":                                off,
		"nodeagent":                       off,
		"mcoserver":                       off,
		"nodeagent," + failpoint.BuildTag: on,
	} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", `{{join .GoFiles " "}}`, pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, out)
		}
		files := strings.Fields(string(out))
		if !slices.Contains(files, want) || slices.Contains(files, on) && slices.Contains(files, off) {
			t.Errorf("-tags %q compiles %v, want %s and not the other of %s and %s", tags, files, want, on, off)
		}
	}

	release, armed := []string{"nodeagent"}, []string{"nodeagent", failpoint.BuildTag}
	for _, c := range []struct {
		target   string
		node     []string // bin/mco-node's tags; nil: the target does not build it
		testTags bool     // its go test has the failpoints
	}{
		{"build", release, false},
		{"image", release, false},
		{"demo", release, false},
		{"test", armed, true},
		{"chaos", armed, true},
		{"unit", nil, true},
	} {
		// -n prints the recipes and runs none; the make running this test (make test) passes
		// its own flags down in MAKEFLAGS, which are not this one's.
		cmd := exec.Command("make", "-n", "-C", filepath.Join("..", ".."), c.target)
		cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", c.target, err, out)
		}
		node, goTest := "", ""
		for _, line := range strings.Split(string(out), "\n") {
			line, _, _ = strings.Cut(line, " #") // a recipe's comment
			switch {
			case strings.Contains(line, "-o bin/mco-node "):
				node = line
			case strings.Contains(line, " test ") && (strings.HasSuffix(line, " ./...") || strings.Contains(line, " ./test/chaos/")):
				goTest = line
			}
		}
		if got := tagsOf(node); !slices.Equal(got, c.node) {
			t.Errorf("make %s builds bin/mco-node with tags %v, want %v: %q", c.target, got, c.node, node)
		}
		if got := slices.Contains(tagsOf(goTest), failpoint.BuildTag); got != c.testTags {
			t.Errorf("make %s: go test has -tags %s: %v, want %v: %q", c.target, failpoint.BuildTag, got, c.testTags, goTest)
		}
	}

	containerfile, err := os.ReadFile(filepath.Join("..", "..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(containerfile), failpoint.BuildTag) {
		t.Errorf("the Containerfile, the release image's build, mentions %s", failpoint.BuildTag)
	}
}

// tagsOf returns the comma-separated tags of a command line's first -tags flag.
func tagsOf(line string) []string {
	f := strings.Fields(line)
	if i := slices.Index(f, "-tags"); i >= 0 && i+1 < len(f) {
		return strings.Split(f[i+1], ",")
	}
	return nil
}
