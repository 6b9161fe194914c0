package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Every dev machine shares the host's kernel, and so its per-user limits: each machine's
// systemd, kubelet, containerd and agent hold inotify instances of root's (about 16 a machine),
// and Debian allows 128 per user. Past that, a kubelet starting on a new or rebooted machine
// fails to watch its certificates ("too many open files") and its Node never comes up; two
// clusters side by side (test/e2e's and test/chaos's, 11 machines) reach it. 1,024 is room for
// about 60 machines.
const (
	inotifyInstancesSetting = "fs/inotify/max_user_instances"
	inotifyInstancesWanted  = 1024
)

// raiseHostLimits raises the host's per-user inotify instances (under procSys, /proc/sys) to
// what dev machines need, never lowering them, and returns what it changed, for the log.
func raiseHostLimits(procSys string) (string, error) {
	path := filepath.Join(procSys, inotifyInstancesSetting)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the host's inotify limit: %w", err)
	}
	current, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return "", fmt.Errorf("the host's inotify limit %s: %q: %w", path, data, err)
	}
	if current >= inotifyInstancesWanted {
		return "", nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(inotifyInstancesWanted)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("raising %s from %d to %d (every machine's systemd, kubelet and agent use inotify instances of root's): %w", path, current, inotifyInstancesWanted, err)
	}
	return fmt.Sprintf("raised the host's fs.inotify.max_user_instances from %d to %d: every machine's systemd, kubelet and agent hold some of root's", current, inotifyInstancesWanted), nil
}
