package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Applier writes configs into one node root.
type Applier struct {
	Root    *noderoot.Root
	Systemd systemd.Manager
	OS      osimage.Backend
}

// Request is one transition.
type Request struct {
	From, To string
	Old, New nodefiles.Set
	// Force rewrites every entry of New, changed or not.
	Force bool
	// OS, when set, is staged by the OS backend.
	OS *osimage.Change
	// Record becomes currentconfig at commit; nil removes it (revert to pre-MachineConfig).
	Record []byte
}

// Txn is a transaction that has journaled its intent.
type Txn struct {
	a       *Applier
	req     Request
	j       *journal
	ops     []op
	units   enablement
	applied bool
}

// Begin plans every mutation and journals the prior state of everything it will touch.
// Nothing outside the state directory changes before Begin returns.
func (a *Applier) Begin(ctx context.Context, req Request) (*Txn, error) {
	if j, err := readJournal(a.Root); err != nil || j != nil {
		return nil, errors.Join(err, fmt.Errorf("a transaction from %q to %q is still journaled; recover first", jFrom(j), jTo(j)))
	}
	acc, err := a.Root.LoadAccounts()
	if err != nil {
		return nil, err
	}
	p := &planner{root: a.Root, acc: acc, force: req.Force}
	if err := p.files(req.Old, req.New); err != nil {
		return nil, err
	}
	if err := p.password(req.Old, req.New); err != nil {
		return nil, err
	}
	units, err := p.units(req.Old, req.New)
	if err != nil {
		return nil, err
	}
	t := &Txn{a: a, req: req, ops: p.ops, units: units, j: &journal{From: req.From, To: req.To}}
	if err := t.journalPriors(); err != nil {
		_ = a.cleanBackups()
		return nil, err
	}
	return t, nil
}

func jFrom(j *journal) string {
	if j == nil {
		return ""
	}
	return j.From
}

func jTo(j *journal) string {
	if j == nil {
		return ""
	}
	return j.To
}

// Changed lists the paths the transaction writes or removes.
func (t *Txn) Changed() []string {
	out := make([]string, len(t.ops))
	for i, o := range t.ops {
		out[i] = o.path
	}
	return out
}

func (t *Txn) journalPriors() error {
	r := t.a.Root
	if _, err := r.MkdirAll(BackupDir, noderoot.DirSpec{Perm: 0o700}); err != nil {
		return err
	}
	seen := map[string]bool{}
	seenDir := map[string]bool{}
	var backups []string
	for _, o := range t.ops {
		if seen[o.path] {
			continue
		}
		seen[o.path] = true
		pr, err := t.capture(o.path, len(t.j.Priors))
		if err != nil {
			return err
		}
		if pr.Backup != "" {
			backups = append(backups, pr.Backup)
		}
		t.j.Priors = append(t.j.Priors, pr)
		if o.kind == opRemove || seenDir[path.Dir(o.path)] {
			continue
		}
		seenDir[path.Dir(o.path)] = true
		missing, err := r.MissingDirs(path.Dir(o.path))
		if err != nil {
			return err
		}
		for _, d := range missing {
			if !seenDir["created:"+d] {
				seenDir["created:"+d] = true
				t.j.CreatedDirs = append(t.j.CreatedDirs, d)
			}
		}
	}
	if !t.units.empty() {
		links, dirs, err := snapshotUnitLinks(r)
		if err != nil {
			return err
		}
		t.j.UnitLinks, t.j.UnitDirs, t.j.SnapshotUnit = links, dirs, true
	}
	if err := r.SyncDirs(append(backups, BackupDir+"/x")); err != nil {
		return err
	}
	return writeJournal(r, t.j)
}

// capture saves what is at p now: a hard link (or copy) of a file, a symlink's target, or
// that nothing is there.
func (t *Txn) capture(p string, n int) (prior, error) {
	r := t.a.Root
	info, err := r.Lstat(p)
	if err != nil {
		return prior{}, err
	}
	switch info.Type {
	case noderoot.Missing:
		return prior{Path: p, Kind: priorAbsent}, nil
	case noderoot.Symlink:
		return prior{Path: p, Kind: priorSymlink, Target: info.Target}, nil
	case noderoot.Regular:
		backup := BackupDir + "/" + strconv.Itoa(n)
		if err := r.Link(p, backup); err != nil {
			if err := r.CopyFile(p, backup, true); err != nil {
				return prior{}, fmt.Errorf("backing up %s: %w", p, err)
			}
		}
		return prior{Path: p, Kind: priorFile, Backup: backup}, nil
	}
	return prior{}, fmt.Errorf("%s is a directory or special file; refusing to replace it", p)
}

// Apply carries out the journaled mutations, then unit enablement, then OS staging.
func (t *Txn) Apply(ctx context.Context) error {
	t.applied = true
	failpoint.Hit()
	if len(t.units.disableFirst) > 0 {
		if err := t.a.Systemd.Disable(ctx, t.units.disableFirst...); err != nil {
			return err
		}
	}
	r := t.a.Root
	for _, o := range t.ops {
		if err := t.do(r, o); err != nil {
			return fmt.Errorf("%s: %w", o, err)
		}
		failpoint.Hit()
	}
	if err := t.enable(ctx); err != nil {
		return err
	}
	failpoint.Hit()
	if t.req.OS != nil {
		// Journaled just before the backend is asked, not at Begin: a rollback must discard
		// only a staging this transaction started. Whatever a committed update staged for a
		// reboot that has not happened yet (the package backend's record of it lives until
		// the next boot) is not this transaction's to drop.
		t.j.OSStaged = true
		if err := writeJournal(t.a.Root, t.j); err != nil {
			return err
		}
		if err := t.a.OS.Stage(ctx, *t.req.OS); err != nil {
			return fmt.Errorf("staging OS changes with %s: %w", t.a.OS.Name(), err)
		}
		failpoint.Hit()
	}
	return nil
}

func (t *Txn) do(r *noderoot.Root, o op) error {
	if o.kind != opRemove {
		if _, err := r.MkdirAll(path.Dir(o.path), o.parents); err != nil {
			return err
		}
	}
	switch o.kind {
	case opWrite:
		return r.WriteFile(o.path, o.data, o.opts)
	case opSymlink:
		return r.Symlink(o.path, o.target, true)
	default:
		return r.Remove(o.path, true)
	}
}

// enable runs systemctl once per verb. Preset errors are ignored as in OpenShift: a unit
// without an [Install] section or preset rule is fine as it is.
func (t *Txn) enable(ctx context.Context) error {
	if t.units.empty() {
		return nil
	}
	sd := t.a.Systemd
	if err := sd.Enable(ctx, t.units.enable...); err != nil {
		return err
	}
	if err := sd.Disable(ctx, t.units.disable...); err != nil {
		return err
	}
	_ = sd.Preset(ctx, t.units.preset...)
	return nil
}

// Commit makes the transaction durable: sync everything written, then atomically replace
// currentconfig (the commit point), then drop the journal.
func (t *Txn) Commit(ctx context.Context) error {
	r := t.a.Root
	if err := r.SyncDirs(append(t.Changed(), CurrentConfigPath)); err != nil {
		return err
	}
	failpoint.Hit()
	if t.req.Record != nil {
		if err := r.WriteFile(CurrentConfigPath, t.req.Record, noderoot.WriteOptions{Perm: 0o644}); err != nil {
			return err
		}
	} else if err := r.Remove(CurrentConfigPath, false); err != nil {
		return err
	}
	failpoint.Hit()
	return t.a.finish()
}

// finish drops the journal and its backups once the root is in a consistent config.
func (a *Applier) finish() error {
	if err := a.Root.Remove(JournalPath, false); err != nil {
		return err
	}
	failpoint.Hit()
	return a.cleanBackups()
}

func (a *Applier) cleanBackups() error {
	entries, err := a.Root.ReadDir(BackupDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := a.Root.Remove(BackupDir+"/"+e.Name(), true); err != nil {
			return err
		}
	}
	return a.Root.RemoveEmptyDir(BackupDir)
}
