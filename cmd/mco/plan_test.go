//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The changes under testdata/plan (see its README) are planned over testdata/manifests against
// the worker pool's golden render.
func TestPlanOffline(t *testing.T) {
	const current = "testdata/golden/render-worker.yaml"
	tests := []struct {
		name       string
		args       []string
		code       int
		disruption string
		stdoutHas  []string
		stderrHas  string
	}{
		{name: "no change", args: []string{"-f", manifests}, disruption: "none"},
		{name: "file change reboots", args: []string{"-f", manifests, "-f", "testdata/plan/chrony"}, code: 1, disruption: "drain+reboot",
			stdoutHas: []string{"-pool 2.rhel.pool.ntp.org iburst", "+server ntp.example.org iburst"}, stderrHas: "drained and rebooted"},
		{name: "admin policy restarts chronyd", args: []string{"-f", manifests, "-f", "testdata/plan/chrony", "--policy", "testdata/plan/policy.yaml"},
			disruption: "restart chronyd.service"},
		{name: "ssh key", args: []string{"-f", manifests, "-f", "testdata/plan/ssh"}, disruption: "none"},
		{name: "registries digest-only mirror", args: []string{"-f", manifests, "-f", "testdata/plan/registries"}, disruption: "reload crio.service"},
		{name: "unreconcilable", args: []string{"-f", manifests, "-f", "testdata/plan/user"}, code: 2, disruption: "refused",
			stdoutHas: []string{`passwd.users \"alice\"`}, stderrHas: "would refuse"},
		{name: "registries.conf that does not parse", args: []string{"-f", manifests, "-f", "testdata/plan/registries-broken"}, code: 2, disruption: "refused",
			stdoutHas: []string{"cannot be read by containers/image"}, stderrHas: "nodes would refuse this change"},
		{name: "disk without an override", args: []string{"-f", manifests, "-f", "testdata/plan/disk"}, code: 2, disruption: "refused",
			stdoutHas: []string{"storage.disks"}, stderrHas: "would refuse"},
		{name: "disk with the Disks override", args: []string{"-f", manifests, "-f", "testdata/plan/disk", "--policy", "testdata/plan/overrides.yaml"},
			disruption: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"plan", "--offline", "--current", current, "-o", "json"}, tt.args...)
			stdout, stderr, code := runMCO(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			var got struct {
				Pool, Current, Rendered, Disruption string
				Drain, Reboot                       bool
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not a JSON plan: %v\n%s", err, stdout)
			}
			// A refused change (exit 2) keeps the drain and reboot its actions would need.
			if got.Pool != "worker" || got.Disruption != tt.disruption || (tt.code != 2 && (tt.code == 1) != (got.Drain || got.Reboot)) {
				t.Errorf("plan %+v, want pool worker, disruption %q", got, tt.disruption)
			}
			if unchanged := tt.name == "no change"; unchanged != (got.Rendered == got.Current) {
				t.Errorf("rendered %s, current %s", got.Rendered, got.Current)
			}
			for _, s := range tt.stdoutHas {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if !strings.Contains(stderr, tt.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderrHas, stderr)
			}
		})
	}
}

func TestPlanText(t *testing.T) {
	stdout, _, code := runMCO(t, "plan", "--offline", "--current", "testdata/golden/render-worker.yaml", "-f", manifests, "-f", "testdata/plan/chrony")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, s := range []string{"POOL", "DISRUPTION", "drain+reboot", "file /etc/chrony.conf  Reboot   no file policy matches", "--- a/etc/chrony.conf"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
}

func TestPlanErrorsExit2(t *testing.T) {
	for name, args := range map[string][]string{
		"live without -f":     {"plan"},
		"live with --current": {"plan", "-f", manifests, "--current", "testdata/golden/render-worker.yaml"},
		"no current":          {"plan", "--offline", "-f", manifests},
		"missing current":     {"plan", "--offline", "-f", manifests, "--current", "testdata/nope.yaml"},
		"unknown flag":        {"plan", "--offline", "--bogus"},
		"bad output":          {"plan", "--offline", "-f", manifests, "--current", "testdata/golden/render-worker.yaml", "-o", "xml"},
		"current is a pool":   {"plan", "--offline", "-f", manifests, "--current", "testdata/manifests/infra/pool.yaml"},
		"bad manifests":       {"plan", "--offline", "-f", "testdata/invalid", "--current", "testdata/golden/render-worker.yaml"},
		"policy wrong kind":   {"plan", "--offline", "-f", manifests, "--current", "testdata/golden/render-worker.yaml", "--policy", "testdata/golden/render-worker.yaml"},
		"unknown pool":        {"plan", "--offline", "-f", manifests, "--current", "testdata/golden/render-worker.yaml", "--pool", "gpu"},
	} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runMCO(t, args...)
			if code != 2 || stdout != "" || stderr == "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with an error", code, stdout, stderr)
			}
			if name == "live with --current" && !strings.Contains(stderr, "are for --offline") {
				t.Errorf("stderr %q does not say --current is for --offline", stderr)
			}
		})
	}
}
