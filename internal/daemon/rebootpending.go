package daemon

import (
	"path"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// RebootPendingPath records the config whose commit still needs a reboot. It lives in /run,
// which every boot starts empty (a real node's tmpfs, and a dev machine's), so it says "not
// rebooted since" without a boot id (dev machines share the host's kernel, and with it the
// boot id).
const RebootPendingPath = "/run/machine-config-daemon/reboot-pending"

func (a *Agent) markRebootPending(config string) error {
	if _, err := a.root.MkdirAll(path.Dir(RebootPendingPath), noderoot.DirSpec{Perm: 0o755}); err != nil {
		return err
	}
	return a.root.WriteFile(RebootPendingPath, []byte(config+"\n"), noderoot.WriteOptions{Perm: 0o644})
}

// rebootPendingFor reports whether config was committed to be rebooted into during this boot.
func (a *Agent) rebootPendingFor(config string) (bool, error) {
	data, err := a.root.ReadFile(RebootPendingPath)
	if noderoot.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(data)) == config, nil
}
