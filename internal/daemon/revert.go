package daemon

import (
	"context"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/ignition"
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
	name, err := apply.CommittedName(root)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", fmt.Errorf("%s has no %s: nothing is recorded as applied", rootDir, apply.CurrentConfigPath)
	}
	data, err := apply.ReadCommitted(root)
	if err != nil {
		return "", err
	}
	old, err := committedSet(data)
	if err != nil {
		return "", err
	}
	txn, err := a.Begin(ctx, apply.Request{From: name, To: "", Old: old, New: nodefiles.Set{}})
	if err != nil {
		return "", err
	}
	if err := txn.Apply(ctx); err != nil {
		return "", fmt.Errorf("reverting %s: %w (rolled back: %v)", name, err, txn.Rollback(ctx))
	}
	return name, txn.Commit(ctx)
}

func committedSet(record []byte) (nodefiles.Set, error) {
	cfg, err := parseRecord(record)
	if err != nil {
		return nodefiles.Set{}, err
	}
	return nodefiles.FromConfig(cfg)
}

func parseRecord(record []byte) (ignition.Config, error) {
	mc, err := decodeMachineConfig(record)
	if err != nil {
		return ignition.Config{}, err
	}
	return ignition.Parse(mc.Spec.Config.Raw)
}
