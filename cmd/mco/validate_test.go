//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"os"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{{
		name: "valid manifests: silent",
		args: []string{"validate", manifests},
	}, {
		name: "valid manifests with an extra built-in pool: silent",
		args: []string{"validate", "--pool", "master", manifests},
	}, {
		name: "every problem is reported: load, per-MachineConfig, pool and merge-time",
		args: []string{"validate", "testdata/invalid"},
		code: 1,
		stderr: `testdata/invalid/machineconfigs.yaml:1: spec.kernelArgs (line 8 col 3): unknown field
testdata/invalid/machineconfigs.yaml:2: spec.config.storage.files.0.mode (line 23 col 11): mode 06000 of /etc/sudoers.d/ops has bits beyond 0777 (setuid, setgid and sticky are not allowed)
testdata/invalid/machineconfigs.yaml:3: spec.config.systemd.units.0.name (line 39 col 11): invalid systemd unit extension
testdata/invalid/pools.yaml:1: spec.nodeSelector (line 5 col 1): missing or empty: the pool would select no nodes
testdata/invalid/pools.yaml:2: spec.machineConfigSelector (line 15 col 3): "Within" is not a valid label selector operator
testdata/invalid/ssh.bu:1: passwd.users.0.ssh_authorized_key (line 6 col 7): unused key ssh_authorized_key (a Butane warning; mco treats warnings as errors)
pool infra: spec.extensions: the kernel-devel extension cannot be combined with kernel type realtime (set by [60-infra-kernel])
Error: validation failed: 7 problems
`,
	}, {
		name: "without pool manifests the built-in pools are rendered",
		args: []string{"validate", "testdata/merge-conflict.yaml"},
		code: 1,
		stderr: `pool worker: spec.extensions: the kernel-devel extension cannot be combined with kernel type realtime (set by [99-worker-devel 99-worker-rt])
Error: validation failed: 1 problem
`,
	}, {
		name:   "unknown --pool",
		args:   []string{"validate", "--pool", "gpu", manifests},
		code:   1,
		stderr: "--pool gpu: no MachineConfigPool \"gpu\" in the manifests given, and it is not a built-in pool (master, worker)\nError: validation failed: 1 problem\n",
	}, {
		name:   "missing path",
		args:   []string{"validate", "testdata/nope.yaml"},
		code:   1,
		stderr: "testdata/nope.yaml: no such file or directory\nError: validation failed: 1 problem\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMCO(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
