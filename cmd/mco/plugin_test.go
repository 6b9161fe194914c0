//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/testenv"
)

func TestInvocation(t *testing.T) {
	tests := []struct {
		argv0       string
		args        []string
		wantName    string
		wantCmdArgs []string
	}{
		{"mco", []string{"status"}, "", []string{"status"}},
		{"/usr/local/bin/mco", nil, "", nil},
		{"/home/a/.local/bin/kubectl-mco", []string{"status", "--kubeconfig", "k"}, "kubectl mco", []string{"status", "--kubeconfig", "k"}},
		// kubectl completes `kubectl mco st<TAB>` by running kubectl_complete-mco st.
		{"kubectl_complete-mco", []string{"st"}, "kubectl mco", []string{"__complete", "st"}},
		{"kubectl_complete-mco", []string{"rollout", ""}, "kubectl mco", []string{"__complete", "rollout", ""}},
		{"kubectl-mco.exe", nil, "kubectl mco", nil},
	}
	for _, tt := range tests {
		name, args := invocation(tt.argv0, tt.args)
		if name != tt.wantName || !slices.Equal(args, tt.wantCmdArgs) {
			t.Errorf("invocation(%q, %q) = %q, %q; want %q, %q", tt.argv0, tt.args, name, args, tt.wantName, tt.wantCmdArgs)
		}
	}
}

func TestPluginHelpSaysKubectlMCO(t *testing.T) {
	root := newRootCommand()
	asPlugin(root, "kubectl mco")
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"dev", "exec", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"kubectl mco dev exec NODE", "  kubectl mco dev exec worker-0 -- cat /proc/cmdline"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "\n  mco ") {
		t.Errorf("help still shows a bare `mco` example:\n%s", help)
	}
}

// TestKubectlFindsThePlugin puts links named as kubectl's plugin conventions want on PATH and
// asks the real kubectl (bin/tools) to list, run and complete the plugin.
func TestKubectlFindsThePlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("needs bin/mco (make build) and bin/tools/kubectl (make tools)")
	}
	mco := testenv.RequireMCO(t)
	kubectl := testenv.RequireTool(t, "kubectl")
	dir := t.TempDir()
	for _, name := range []string{pluginExecutable, completionExecutable} {
		if err := os.Symlink(mco, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, args...)
		// Only dir and the system: no other plugin, and no kubeconfig needed.
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("plugin", "list"); !strings.Contains(out, filepath.Join(dir, pluginExecutable)) {
		t.Errorf("kubectl plugin list does not find %s:\n%s", pluginExecutable, out)
	}
	if out := run("mco", "version"); !strings.HasPrefix(out, "mco ") {
		t.Errorf("kubectl mco version printed %q", out)
	}
	if out := run("mco", "--help"); !strings.Contains(out, "kubectl mco [command]") {
		t.Errorf("kubectl mco --help does not say kubectl mco:\n%s", out)
	}
	// kubectl completes a plugin's words through kubectl_complete-mco, the cobra protocol:
	// one candidate per line, then :directive.
	out := run("__complete", "mco", "st")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "status\t") }) {
		t.Errorf("kubectl __complete mco st: no status candidate:\n%s", out)
	}
	if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "server\t") }) {
		t.Errorf("kubectl __complete mco st offers server:\n%s", out)
	}
	out = run("__complete", "mco", "rollout", "")
	if !strings.Contains(out, "resume\t") || !strings.Contains(out, "status\t") {
		t.Errorf("kubectl __complete mco rollout '': want its subcommands:\n%s", out)
	}
}
