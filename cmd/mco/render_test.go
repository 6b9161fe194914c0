//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"
)

// testdata/manifests: base configs for both built-in pools (YAML, two documents), a worker
// override in JSON with Ignition 2.2, a Butane openshift config, a Butane fcos config, and a
// custom infra pool with its own MachineConfig.
const manifests = "testdata/manifests"

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"render-worker.yaml", []string{"render", "--pool", "worker", manifests}},
		{"render-master.yaml", []string{"render", "--pool", "master", manifests}},
		{"render-infra.json", []string{"render", "--pool", "infra", "-o", "json", "--os-image-url", "quay.io/example/os:default", manifests}},
		{"render-worker-ignition.json", []string{"render", "--pool", "worker", "--ignition", manifests}},
		{"render-worker-ignition-3.1.json", []string{"render", "--pool", "worker", "--ignition", "--spec-version", "3.1", manifests}},
		{"render-worker-ignition-2.2.yaml", []string{"render", "--pool", "worker", "--ignition", "--spec-version", "2.2.0", "-o", "yaml", manifests}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			stdout, stderr, code := runMCO(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			golden(t, tt.golden, stdout)
		})
	}
}

// The goldens pin the exact output; these checks say what in it matters, so a golden rewritten
// by mistake still fails here.
func TestRenderMergesWhatThePoolSelects(t *testing.T) {
	worker := renderedMC(t, "render", "--pool", "worker", "--os-image-url", "quay.io/example/os:default", manifests)
	if !strings.HasPrefix(worker.Name, "rendered-worker-") {
		t.Errorf("name = %q", worker.Name)
	}
	ign := parseIgnition(t, worker)
	if got := fileContents(t, ign, "/etc/motd"); got != "worker node\n" {
		t.Errorf("worker /etc/motd = %q: 99-worker-kargs (Ignition 2.2, JSON) must override 00-worker", got)
	}
	if fileContents(t, ign, "/etc/chrony.conf") == "" {
		t.Error("the Butane openshift config is missing from the worker render")
	}
	if !hasCoreKey(ign, "admin@example.com") {
		t.Error("the fcos config (role from --pool) is missing from the worker render")
	}
	if got := strings.Join(worker.Spec.KernelArguments, " "); got != "systemd.unified_cgroup_hierarchy=1 nosmt mitigations=auto" {
		t.Errorf("kernelArguments = %q, want concatenation in merge order", got)
	}
	if worker.Spec.OSImageURL != "quay.io/example/os:default" {
		t.Errorf("osImageURL = %q, want the --os-image-url default", worker.Spec.OSImageURL)
	}

	infra := renderedMC(t, "render", "--pool", "infra", "--os-image-url", "quay.io/example/os:default", manifests)
	ign = parseIgnition(t, infra)
	if got := fileContents(t, ign, "/etc/motd"); got != "infra node\n" {
		t.Errorf("infra /etc/motd = %q: 10-infra must override worker MCs despite its name", got)
	}
	if !strings.HasPrefix(infra.Spec.OSImageURL, "quay.io/example/infra-os@") {
		t.Errorf("infra osImageURL = %q, want 10-infra's override", infra.Spec.OSImageURL)
	}

	master := renderedMC(t, "render", "--pool", "master", manifests)
	if got := fileContents(t, parseIgnition(t, master), "/etc/motd"); got != "control plane\n" {
		t.Errorf("master /etc/motd = %q", got)
	}
}

func TestRenderIsDeterministicAndPoolManifestWinsOverBuiltin(t *testing.T) {
	first, _, _ := runMCO(t, "render", "--pool", "worker", manifests)
	second, _, _ := runMCO(t, "render", "--pool", "worker", manifests)
	if first != second || first == "" {
		t.Error("two renders of the same input differ")
	}
	// A worker pool manifest that selects only the fcos config replaces the built-in selector.
	dir := t.TempDir()
	writeFile(t, dir+"/worker.yaml", `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: worker
spec:
  machineConfigSelector:
    matchLabels:
      example.com/only: "yes"
  nodeSelector:
    matchLabels:
      node-role.kubernetes.io/worker: ""
`)
	writeFile(t, dir+"/only.yaml", `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: only
  labels:
    example.com/only: "yes"
spec:
  kernelArguments: [only]
`)
	mc := renderedMC(t, "render", "--pool", "worker", manifests, dir)
	if got := strings.Join(mc.Spec.KernelArguments, " "); got != "only" {
		t.Errorf("kernelArguments = %q: the pool manifest's selector was not used", got)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{{
		name: "render errors are reported at the file, document and line of the MachineConfig",
		args: []string{"render", "--pool", "worker", "testdata/unrenderable"},
		stderr: `testdata/unrenderable/99-worker-files.yaml:1: spec.config.storage.files.0.mode (line 14 col 11): mode 04755 of /usr/local/bin/helper has bits beyond 0777 (setuid, setgid and sticky are not allowed)
testdata/unrenderable/99-worker-files.yaml:1: spec.config.storage.files.1.contents.source (line 19 col 13): /etc/remote.conf: only inline data: URLs are supported; remote sources cannot be applied to running nodes
testdata/unrenderable/99-worker-kernel.json:1: spec.kernelType (line 6 col 5): unknown kernel type "rt" (want default, realtime or 64k-pages)
testdata/unrenderable/99-worker-kernel.json:1: spec.extensions.1 (line 7 col 32): unsupported extension "tcpdump" (supported: ipsec, kerberos, kernel-devel, sandboxed-containers, sysstat, two-node-ha, usbguard)
Error: cannot render pool worker: 4 problems
`,
	}, {
		name: "bad input stops before rendering, with every load problem",
		args: []string{"render", "--pool", "infra", "testdata/invalid"},
		stderr: `testdata/invalid/machineconfigs.yaml:1: spec.kernelArgs (line 8 col 3): unknown field
testdata/invalid/ssh.bu:1: passwd.users.0.ssh_authorized_key (line 6 col 7): unused key ssh_authorized_key (a Butane warning; mco treats warnings as errors)
Error: bad input: 2 problems
`,
	}, {
		name:   "a config needing a newer spec than asked for",
		args:   []string{"render", "--pool", "worker", "--ignition", "--spec-version", "3.2.0", "testdata/newspec"},
		stderr: "Error: converting Ignition config to spec 3.2.0: KernelArguments is not supported on 3.2 (use --spec-version 3.3.0 or newer)\n",
	}, {
		name:   "built-in pool that selects nothing",
		args:   []string{"render", "--pool", "master", "testdata/newspec"},
		stderr: "pool master: spec.machineConfigSelector: no MachineConfigs match machineconfiguration.openshift.io/role=master\nError: cannot render pool master: 1 problem\n",
	}, {
		name:   "pool manifest that selects nothing is pointed at",
		args:   []string{"render", "--pool", "infra", "testdata/manifests/infra/pool.yaml"},
		stderr: "testdata/manifests/infra/pool.yaml:1: spec.machineConfigSelector (line 6 col 3): pool infra: no MachineConfigs match machineconfiguration.openshift.io/role in (infra,worker)\nError: cannot render pool infra: 1 problem\n",
	}, {
		name:   "unknown pool",
		args:   []string{"render", "--pool", "gpu", manifests},
		stderr: `Error: --pool gpu: no MachineConfigPool "gpu" in the manifests given, and it is not a built-in pool (master, worker)` + "\n",
	}, {
		name:   "missing --pool",
		args:   []string{"render", manifests},
		stderr: `Error: required flag(s) "pool" not set` + "\n",
	}, {
		name:   "unknown output format",
		args:   []string{"render", "--pool", "worker", "-o", "toml", manifests},
		stderr: `Error: --output: unknown format "toml" (want yaml or json)` + "\n",
	}, {
		name:   "unsupported spec version",
		args:   []string{"render", "--pool", "worker", "--ignition", "--spec-version", "3.0.0", manifests},
		stderr: "Error: --spec-version 3.0.0: want one of 3.5.0, 3.4.0, 3.3.0, 3.2.0, 3.1.0, 2.2.0\n",
	}, {
		name:   "unparseable spec version is named as given",
		args:   []string{"render", "--pool", "worker", "--ignition", "--spec-version", "3.x", manifests},
		stderr: "Error: --spec-version 3.x: want one of 3.5.0, 3.4.0, 3.3.0, 3.2.0, 3.1.0, 2.2.0\n",
	}, {
		name:   "--spec-version without --ignition",
		args:   []string{"render", "--pool", "worker", "--spec-version", "3.4.0", manifests},
		stderr: "Error: --spec-version applies to --ignition output only\n",
	}, {
		name:   "missing path",
		args:   []string{"render", "--pool", "worker", "testdata/nope"},
		stderr: "testdata/nope: no such file or directory\nError: bad input: 1 problem\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMCO(t, tt.args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout not empty:\n%s", stdout)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tt.stderr)
			}
		})
	}
}

func renderedMC(t *testing.T, args ...string) *mcfgv1.MachineConfig {
	t.Helper()
	stdout, stderr, code := runMCO(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d:\n%s", args, code, stderr)
	}
	var mc mcfgv1.MachineConfig
	if err := yaml.UnmarshalStrict([]byte(stdout), &mc); err != nil {
		t.Fatalf("output is not a MachineConfig: %v\n%s", err, stdout)
	}
	return &mc
}

func parseIgnition(t *testing.T, mc *mcfgv1.MachineConfig) types.Config {
	t.Helper()
	var cfg types.Config
	if err := json.Unmarshal(mc.Spec.Config.Raw, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func fileContents(t *testing.T, cfg types.Config, path string) string {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		if f.Path == path && f.Contents.Source != nil {
			d, err := dataurl.DecodeString(*f.Contents.Source)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return string(d.Data)
		}
	}
	return ""
}

func hasCoreKey(cfg types.Config, comment string) bool {
	for _, u := range cfg.Passwd.Users {
		for _, k := range u.SSHAuthorizedKeys {
			if u.Name == "core" && strings.HasSuffix(string(k), comment) {
				return true
			}
		}
	}
	return false
}
