package daemon

import (
	"fmt"
	"io"
	"path"

	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// maxHostFileRead bounds what is read of a host file to classify it; a kubeconfig with
// embedded certificates is a few KiB.
const maxHostFileRead = 1 << 20

// hostConflict is hostlayout's verdict on moving from old to next on this host; the host's
// own files are read only when the verdict depends on them.
func (a *Agent) hostConflict(desired string, old, next *loaded) error {
	return hostlayout.CheckKubeletConf(desired, old.set, next.set, func(p string) ([]byte, error) {
		data, err := a.readHostFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading this host's %s to check %s against it: %w", p, desired, err)
		}
		return data, nil
	})
}

// readHostFile is the content of the file at p, following one symlink there (kubelet
// follows it too); nil when there is none, or what is there is no regular file or too large
// to be a config file.
func (a *Agent) readHostFile(p string) ([]byte, error) {
	info, err := a.root.Lstat(p)
	if err != nil {
		return nil, err
	}
	if info.Type == noderoot.Symlink {
		target := info.Target
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = target
		if info, err = a.root.Lstat(p); err != nil {
			return nil, err
		}
	}
	if info.Type != noderoot.Regular || info.Size > maxHostFileRead {
		return nil, nil
	}
	f, err := a.root.OpenFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxHostFileRead))
}
