//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/internal/version"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// controlPlane serves the commands that talk to a cluster (testenv.Integration tests); nil under -short.
var controlPlane *testenv.Env

// TestMain pins the version stamped on rendered configs, so goldens hold however the test
// binary was built, and starts one control plane for the package's integration tests.
func TestMain(m *testing.M) {
	version.Commit = "test-commit"
	os.Exit(testenv.RunWithControlPlane(m, "mco CLI", func(e *testenv.Env) (func(), error) {
		controlPlane = e
		return nil, nil
	}))
}

// runMCO runs the mco command tree in-process the way main does, returning what it printed
// and the exit code main would use.
func runMCO(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(&errOut, "Error:", err)
		code = exitCode(err)
	}
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/golden/name, or rewrites the file under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/mco -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/mco -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
