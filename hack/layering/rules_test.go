package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Graph
		want []string
	}{
		{name: "layered as the rules say", g: Graph{
			"internal/daemon": {"internal/protocol"}, "internal/controller/node": {"internal/protocol", "internal/rollout"},
			"internal/protocol": nil, "internal/rollout": nil, "cmd/mco": {"internal/dev/cluster", "internal/statusview"},
			"internal/dev/cluster": nil, "internal/statusview": nil,
		}},
		{name: "the agent importing a controller", g: Graph{"internal/daemon/plan": {"internal/controller/enqueue"}, "internal/controller/enqueue": nil},
			want: []string{"the agent never depends on a controller, the server or the KubeletConfig generator: internal/daemon/plan -> internal/controller/enqueue"}},
		{name: "through a package between", g: Graph{
			"internal/daemon": {"internal/changeplan"}, "internal/changeplan": {"internal/statusview"}, "internal/statusview": nil,
		}, want: []string{
			"controllers, the agent and the server never depend on a command's views: internal/changeplan -> internal/statusview",
			"controllers, the agent and the server never depend on a command's views: internal/daemon -> internal/changeplan -> internal/statusview",
		}},
		{name: "production on the dev harness; the harness and diagnose may", g: Graph{
			"internal/render": {"internal/dev/machine/metadata"}, "internal/dev/machine/metadata": nil,
			"internal/diagnose": {"internal/dev/cluster"}, "internal/dev/cluster": {"internal/dev/network"}, "internal/dev/network": nil,
		}, want: []string{"production code never depends on the dev harness: internal/render -> internal/dev/machine/metadata"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(tc.g, Rules) {
				got = append(got, v.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestAForbiddenImportFailsVet: the command, as make vet runs it, exits 1 naming the chain in
// a module where the agent imports a controller, and 0 once that import is gone.
func TestAForbiddenImportFailsVet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs go list")
	}
	bin := filepath.Join(t.TempDir(), "layering")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, path), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/mco-dev/mco\n\ngo 1.26\n")
	write("internal/controller/enqueue/enqueue.go", "package enqueue\n")
	write("internal/daemon/plan/plan.go", "package plan\n\nimport _ \"github.com/mco-dev/mco/internal/controller/enqueue\"\n")
	run := func() (int, string) {
		cmd := exec.Command(bin)
		cmd.Dir = mod
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	code, out := run()
	if code != 1 || !strings.Contains(out, "internal/daemon/plan -> internal/controller/enqueue") {
		t.Fatalf("with the agent importing a controller: exit %d\n%s", code, out)
	}
	write("internal/daemon/plan/plan.go", "package plan\n")
	if code, out := run(); code != 0 {
		t.Fatalf("with the import gone: exit %d\n%s", code, out)
	}
}
