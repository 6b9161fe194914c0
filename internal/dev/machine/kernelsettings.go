package machine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kubeletKernelSettings are the kernel settings the kubelet writes when /proc/sys holds anything
// else (k8s.io/kubernetes pkg/kubelet/cm setupKernelTunables, v1.36). Every machine shares the
// host's kernel, so in a machine they would be the host's: the boot stage presents them instead.
var kubeletKernelSettings = []struct{ Key, Value string }{
	{"vm/overcommit_memory", "1"},
	{"vm/panic_on_oom", "0"},
	{"kernel/panic", "10"},
	{"kernel/panic_on_oops", "1"},
	{"kernel/keys/root_maxkeys", "1000000"},
	{"kernel/keys/root_maxbytes", "25000000"},
}

// kernelSettingsDir holds, inside the machine, the files presented over /proc/sys.
const kernelSettingsDir = "/run/mco-dev/sysctl"

// presentKernelSettings bind-mounts a read-only file holding each of kubeletKernelSettings over
// its /proc/sys file in root (proc and /run mounted): the kubelet reads what it wants and writes
// nothing, and a write by anyone else fails instead of changing the host.
func presentKernelSettings(root string) error {
	dir := filepath.Join(root, kernelSettingsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range kubeletKernelSettings {
		file := filepath.Join(dir, strings.ReplaceAll(s.Key, "/", "."))
		if err := os.WriteFile(file, []byte(s.Value+"\n"), 0o444); err != nil {
			return err
		}
		if err := bindReadOnly(file, filepath.Join(root, "proc/sys", s.Key)); err != nil {
			return fmt.Errorf("presenting %s: %w", s.Key, err)
		}
	}
	return nil
}
