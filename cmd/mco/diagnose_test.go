//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/diagnose"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestDiagnoseCommandOnACluster runs `mco diagnose` against the real API server with a
// kubeconfig that is no dev cluster's: it takes logs from pods, finds none, says so on stderr
// and in errors.txt, and still writes the bundle under a directory named after the file.
func TestDiagnoseCommandOnACluster(t *testing.T) {
	testenv.Integration(t)
	out := filepath.Join(t.TempDir(), "case-42.tar.gz")
	stdout, stderr, code := runMCO(t, "diagnose", "--kubeconfig", controlPlane.KubeconfigPath, "--output", out, "--since", "10m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stdout, "pods in namespace openshift-machine-config-operator") {
		t.Errorf("stdout %q: want the file and the pods as the log source", stdout)
	}
	if !strings.Contains(stderr, "case-42/errors.txt") {
		t.Errorf("stderr %q: want a pointer to errors.txt", stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, err := diagnose.ReadBundle(f, "case-42")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.txt", "errors.txt", "redactions.txt", "cluster/events.txt"} {
		if _, ok := files[name]; !ok {
			t.Errorf("bundle lacks %s", name)
		}
	}
	if e := files["errors.txt"]; !strings.Contains(e, "logs of controller: no pod labelled") {
		t.Errorf("errors.txt:\n%s", e)
	}
}
