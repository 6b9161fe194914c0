package daemon

import (
	"errors"
	"time"

	"github.com/mco-dev/mco/internal/containerdhosts"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
)

// runtime is this node's container runtime, as its kubelet reports it on the Node, with
// containerd's configuration file when it is containerd (read again only when it changed).
func (a *Agent) runtime() (hostlayout.Runtime, error) {
	var rt hostlayout.Runtime
	switch node := a.kube.node(); {
	case a.opts.Runtime != nil:
		rt = *a.opts.Runtime
	case node != nil:
		rt = hostlayout.RuntimeOf(node.Status.NodeInfo.ContainerRuntimeVersion)
	}
	if rt.Name == hostlayout.RuntimeContainerd {
		data, err := a.s.containerdConfig.read(a.root, containerdhosts.ContainerdConfigPath, time.Now())
		if err != nil {
			return rt, err
		}
		rt.ContainerdConfig = data
	}
	return rt, nil
}

// deriveForHost adds to l what this host's runtime needs besides the config's own files, or
// records why the host cannot be given it.
func (a *Agent) deriveForHost(l *loaded) error {
	rt, err := a.runtime()
	if err != nil {
		return err
	}
	derived, err := hostlayout.Derive(rt, l.set)
	if derivedErr := (*hostlayout.DerivedError)(nil); errors.As(err, &derivedErr) {
		l.hostErr = err
		return nil
	}
	if err != nil {
		return err
	}
	l.set = hostlayout.WithDerived(l.set, derived)
	return nil
}
