package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// BootGuardOptions configure BootGuard; zero values are the real host.
type BootGuardOptions struct {
	Root     string
	OS       osimage.Backend
	Systemd  systemd.Manager
	Rebooter reboot.Rebooter
	Log      *slog.Logger
	// Poll is the period of the checks (default 5 s).
	Poll time.Duration
	// BootedAt is when this boot began (default: the machine's PID 1 start, see machineBootedAt).
	BootedAt time.Time
	// Observe checks the kubelet and the Node (default: the running kubelet's healthz, and
	// the Node read with the kubelet's own kubeconfig).
	Observe func(ctx context.Context, node string, bootedAt time.Time) (kubelet, ready bootguard.Check)
	Now     func() time.Time
}

func (o *BootGuardOptions) defaults(root *noderoot.Root) error {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Poll == 0 {
		o.Poll = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Systemd == nil {
		o.Systemd = systemd.New(o.Root)
	}
	if o.OS == nil {
		o.OS = osimage.Detect(o.Root, func(p string) bool { ok, _ := root.Exists(p); return ok }, systemd.ExecRunner)
	}
	if o.Rebooter == nil {
		o.Rebooter = reboot.Systemd{Root: o.Root, Run: systemd.ExecRunner}
	}
	if o.Observe == nil {
		o.Observe = observeKubelet("/proc")
	}
	if o.BootedAt.IsZero() {
		at, err := machineBootedAt("/proc")
		if err != nil {
			return fmt.Errorf("when did this boot begin: %w", err)
		}
		o.BootedAt = at
	}
	return nil
}

// BootGuard is mco-boot-guard.service: on the boot after the agent armed it, it waits until
// the kubelet is healthy and the Node Ready, or until the record's timeout (counted from the
// boot) ends; healthy, it disarms; not, it reverts the update's transaction to the previous
// config, records the failure for the agent, disarms and reboots, once per target.
func BootGuard(ctx context.Context, opts BootGuardOptions) (bootguard.Decision, error) {
	root, err := noderoot.Open(cmp.Or(opts.Root, "/"))
	if err != nil {
		return bootguard.Decision{}, err
	}
	defer root.Close()
	if err := opts.defaults(root); err != nil {
		return bootguard.Decision{}, err
	}
	for {
		facts, err := guardFacts(root)
		if err != nil {
			return bootguard.Decision{}, err
		}
		if facts.Guarding() {
			facts.SinceBoot = opts.Now().Sub(opts.BootedAt)
			facts.Kubelet, facts.Node = opts.Observe(ctx, facts.Record.Node, opts.BootedAt)
		}
		d := bootguard.Decide(facts)
		switch d.Action {
		case bootguard.Nothing:
			opts.Log.Info("boot guard: nothing to do", "why", d.Why)
			return d, nil
		case bootguard.Disarm:
			opts.Log.Info("boot guard: disarming", "why", d.Why)
			return d, root.Remove(bootguard.RecordPath, false)
		case bootguard.Revert:
			d.Failure.At = opts.Now().UTC()
			opts.Log.Warn("boot guard: the node did not come back healthy; reverting", "check", d.Failure.Check, "evidence", d.Failure.Evidence)
			return d, revertBrokenBoot(ctx, root, opts, facts.Record, d.Failure)
		}
		select {
		case <-ctx.Done():
			return d, ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

// guardFacts reads the records on the disk (not the kubelet: Observe does that).
func guardFacts(root *noderoot.Root) (bootguard.Facts, error) {
	var f bootguard.Facts
	data, err := root.ReadFile(bootguard.RecordPath)
	if noderoot.IsNotExist(err) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if f.Record, err = bootguard.ParseRecord(data); err != nil {
		return f, err
	}
	if f.Committed, err = apply.CommittedName(root); err != nil {
		return f, err
	}
	pending, err := root.ReadFile(RebootPendingPath)
	if err != nil && !noderoot.IsNotExist(err) {
		return f, err
	}
	f.RebootPending = strings.TrimSpace(string(pending))
	failed, err := readBootFailure(root)
	if err != nil {
		return f, err
	}
	if failed != nil {
		f.FailedFor = failed.To
	}
	return f, nil
}

func readBootFailure(root *noderoot.Root) (*bootguard.Failure, error) {
	data, err := root.ReadFile(bootguard.FailedPath)
	if noderoot.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return bootguard.ParseFailure(data)
}

// revertBrokenBoot moves the root from the record's To back to its From as one transaction
// (files, units, the OS backend's kernel arguments, kernel type, extensions and image), records
// the failure, disarms and reboots. A revert that fails is rolled back, recorded and not
// rebooted for: the agent reports it if the node ever runs it again, and nothing retries it.
func revertBrokenBoot(ctx context.Context, root *noderoot.Root, opts BootGuardOptions, rec *bootguard.Record, failed *bootguard.Failure) error {
	revertErr := revertTo(ctx, root, opts, rec)
	if revertErr != nil {
		failed.RevertError = revertErr.Error()
	}
	data, err := json.Marshal(failed)
	if err != nil {
		return err
	}
	if err := root.WriteFile(bootguard.FailedPath, data, noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return errors.Join(revertErr, err)
	}
	if err := root.Remove(bootguard.RecordPath, false); err != nil {
		return errors.Join(revertErr, err)
	}
	if revertErr != nil {
		return revertErr
	}
	opts.Log.Info("boot guard: reverted; rebooting into the previous config", "from", rec.To, "to", rec.From)
	return opts.Rebooter.Reboot(ctx, fmt.Sprintf("boot guard: %s did not come back healthy; reverted to %s", rec.To, rec.From))
}

// revertTo is the transaction To → From, as Revert runs one: the committed config's set and
// the previous one's, each with what the host derives from them.
func revertTo(ctx context.Context, root *noderoot.Root, opts BootGuardOptions, rec *bootguard.Record) error {
	a := &apply.Applier{Root: root, Systemd: opts.Systemd, OS: opts.OS}
	if _, err := a.Recover(ctx); err != nil {
		return err
	}
	data, err := apply.ReadCommitted(root)
	if err != nil {
		return err
	}
	if data == nil {
		return fmt.Errorf("%s is gone: nothing to revert", apply.CurrentConfigPath)
	}
	brokenMC, err := decodeMachineConfig(data)
	if err != nil {
		return err
	}
	prevMC, err := decodeMachineConfig(rec.Previous)
	if err != nil {
		return fmt.Errorf("the previous config in %s: %w", bootguard.RecordPath, err)
	}
	if brokenMC.Name != rec.To || prevMC.Name != rec.From {
		return fmt.Errorf("%s holds %s and the record %s, not %s and %s as armed", apply.CurrentConfigPath, brokenMC.Name, prevMC.Name, rec.To, rec.From)
	}
	index, err := readEtcdIndex(root)
	if err != nil {
		return err
	}
	broken, err := parseOnHost(root, brokenMC, index)
	if err != nil {
		return err
	}
	prev, err := parseOnHost(root, prevMC, index)
	if err != nil {
		return err
	}
	req := apply.Request{From: rec.To, To: rec.From, Old: broken.set, New: prev.set, Record: rec.Previous}
	if c := osimage.ChangeBetween(brokenMC.Spec, prevMC.Spec); !c.Empty() {
		if err := osimage.Refuse(opts.OS, c, prevMC.Spec); err != nil {
			return err
		}
		req.OS = &c
	}
	txn, err := a.Begin(ctx, req)
	if err != nil {
		return fmt.Errorf("preparing the revert to %s: %w", rec.From, err)
	}
	if err := txn.Apply(ctx); err != nil {
		return fmt.Errorf("reverting to %s: %w (rolled back: %v)", rec.From, err, txn.Rollback(ctx))
	}
	return txn.Commit(ctx)
}
