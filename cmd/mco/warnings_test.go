//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// testdata/ignition-warnings holds a MachineConfig as OpenShift's QE fixtures write it: spec 3.2
// with spec 2's networkd section and a file's filesystem, which Ignition ignores with a warning.
const qeFixture = "testdata/ignition-warnings"

const qeWarnings = `warning: testdata/ignition-warnings/99-worker-qe.yaml:1: MachineConfig 99-worker-qe: spec.config.networkd (line 13 col 5): unknown key "networkd" in spec 3.2.0: ignored, as Ignition and OpenShift ignore it
warning: testdata/ignition-warnings/99-worker-qe.yaml:1: MachineConfig 99-worker-qe: spec.config.storage.files.0.filesystem (line 19 col 9): unknown key "filesystem" in spec 3.2.0: ignored, as Ignition and OpenShift ignore it
`

func TestValidateWarnsAndExitsZero(t *testing.T) {
	stdout, stderr, code := runMCO(t, "validate", qeFixture)
	if code != 0 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 0 and nothing", code, stdout)
	}
	if stderr != qeWarnings {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, qeWarnings)
	}
}

func TestRenderWarnsAndRendersWithoutTheKeys(t *testing.T) {
	stdout, stderr, code := runMCO(t, "render", "--pool", "worker", "--ignition", manifests, qeFixture)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if stderr != qeWarnings {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, qeWarnings)
	}
	for _, key := range []string{"networkd", "filesystem", "10-eth0.network"} {
		if strings.Contains(stdout, key) {
			t.Errorf("rendered Ignition holds %s:\n%s", key, stdout)
		}
	}
	if !strings.Contains(stdout, `"path": "/etc/qe-test.conf"`) {
		t.Errorf("the file is not rendered:\n%s", stdout)
	}
}

func TestPlanWarnsWithoutChangingTheVerdict(t *testing.T) {
	args := []string{"plan", "--offline", "--current", "testdata/golden/render-worker.yaml", "-o", "json", "-f", manifests}
	cleanOut, _, cleanCode := runMCO(t, append(args, "-f", "testdata/plan/ssh")...)
	stdout, stderr, code := runMCO(t, append(args, "-f", "testdata/plan/ssh-networkd")...)
	if code != cleanCode || code != 0 {
		t.Fatalf("exit %d, want %d as without networkd; stderr:\n%s", code, cleanCode, stderr)
	}
	wantLine := `warning: testdata/plan/ssh-networkd/99-worker-ssh.yaml:1: MachineConfig 99-worker-ssh: spec.config.networkd (line 12 col 5): unknown key "networkd" in spec 3.5.0: ignored, as Ignition and OpenShift ignore it` + "\n"
	if stderr != wantLine {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantLine)
	}
	var clean, got struct {
		Rendered, Disruption string
		Warnings             []struct {
			MachineConfig, Field, Key, Reason string
			Line, Column                      int
		}
	}
	if err := json.Unmarshal([]byte(cleanOut), &clean); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not a JSON plan: %v\n%s", err, stdout)
	}
	if got.Rendered != clean.Rendered || got.Disruption != clean.Disruption {
		t.Errorf("plan renders %s (%s), want %s (%s) as without networkd", got.Rendered, got.Disruption, clean.Rendered, clean.Disruption)
	}
	if len(got.Warnings) != 1 || got.Warnings[0].MachineConfig != "99-worker-ssh" || got.Warnings[0].Key != "networkd" || got.Warnings[0].Line == 0 {
		t.Errorf("plan warnings %+v, want networkd of 99-worker-ssh with its position", got.Warnings)
	}
}
