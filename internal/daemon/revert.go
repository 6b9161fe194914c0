package daemon

import (
	"context"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Revert returns a node root to its state before any MachineConfig, using the ownership
// record: every path of the committed config gets its original back or is deleted, core's
// password returns to its original hash, and currentconfig is removed. Files no MachineConfig
// mentioned are not touched. It is one transaction like any update.
func Revert(ctx context.Context, rootDir string, sd systemd.Manager) (string, error) {
	root, err := noderoot.Open(rootDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if sd == nil {
		sd = systemd.New(rootDir)
	}
	a := &apply.Applier{Root: root, Systemd: sd}
	if _, err := a.Recover(ctx); err != nil {
		return "", err
	}
	data, err := apply.ReadCommitted(root)
	if err != nil {
		return "", err
	}
	mc := &mcfgv1.MachineConfig{}
	if data != nil {
		if mc, err = decodeMachineConfig(data); err != nil {
			return "", err
		}
	}
	name := mc.Name
	if name == "" {
		return "", fmt.Errorf("%s has no %s: nothing is recorded as applied", rootDir, apply.CurrentConfigPath)
	}
	index, err := readEtcdIndex(root)
	if err != nil {
		return "", err
	}
	committed, err := parseOnHost(root, mc, index)
	if err != nil {
		return "", err
	}
	txn, err := a.Begin(ctx, apply.Request{From: name, To: "", Old: committed.set, New: nodefiles.Set{}})
	if err != nil {
		return "", err
	}
	if err := txn.Apply(ctx); err != nil {
		return "", fmt.Errorf("reverting %s: %w (rolled back: %v)", name, err, txn.Rollback(ctx))
	}
	return name, txn.Commit(ctx)
}

// parseOnHost is mc's config as this host holds it once written: its own set with what the
// host derives from it (the runtime files hostlayout adds), read from the root itself, since
// reverting runs where no agent has described the runtime.
func parseOnHost(root *noderoot.Root, mc *mcfgv1.MachineConfig, etcdIndex *int) (*loaded, error) {
	l, err := parseConfig(mc, etcdIndex)
	if err != nil {
		return nil, err
	}
	l.set = hostlayout.WithDerived(l.set, hostlayout.DerivedOnHost(l.set, root.ReadFile))
	return l, nil
}
