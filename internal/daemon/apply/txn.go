package apply

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/plantedlink"
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
	a     *Applier
	req   Request
	j     *journal
	ops   []op
	units enablement
	// created are the directories Apply made, exactly; the journal can only list them
	// before they exist.
	created []string
	// stateDirs are state directories Begin made for the journal.
	stateDirs []string
}

// Begin plans every mutation and journals the prior state of everything it will touch.
// Nothing outside the state directory changes before Begin returns. A path it could only write
// through something that is not a directory (a file, a dangling symlink, a symlink leading out
// of the root) refuses the whole transaction here, naming the path and what is in the way, as
// does a symlink planted on the host in a parent position (package plantedlink).
func (a *Applier) Begin(ctx context.Context, req Request) (*Txn, error) {
	if j, err := readJournal(a.Root); err != nil || j != nil {
		return nil, errors.Join(err, fmt.Errorf("a transaction from %q to %q is still journaled; recover first", jFrom(j), jTo(j)))
	}
	// Before the planner reads anything through a planted link (a "file" under /proc can be
	// endless, and its original is no file to keep).
	if refusal, err := plantedlink.InSet(a.Root, req.New); err != nil || refusal != nil {
		return nil, refused(refusal, err)
	}
	acc, err := a.Root.LoadAccounts()
	if err != nil {
		return nil, err
	}
	p := &planner{root: a.Root, acc: acc, force: req.Force}
	if err := p.files(req.Old, req.New); err != nil {
		return nil, err
	}
	if err := p.skipPlantedLinks(); err != nil {
		return nil, err
	}
	if err := p.password(req.Old, req.New); err != nil {
		return nil, err
	}
	units, err := p.units(req.Old, req.New)
	if err != nil {
		return nil, err
	}
	dirs, err := dirsToCreate(a.Root, p.ops)
	if err != nil {
		return nil, err
	}
	t := &Txn{a: a, req: req, ops: p.ops, units: units, j: &journal{From: req.From, To: req.To, CreatedDirs: dirs}}
	if err := t.journalPriors(); err != nil {
		return nil, errors.Join(err, t.undoBegin())
	}
	return t, nil
}

// undoBegin removes what a Begin that could not journal made: backups, state directories.
func (t *Txn) undoBegin() error {
	err := t.a.cleanBackups()
	for i := len(t.stateDirs) - 1; i >= 0; i-- {
		err = errors.Join(err, t.a.Root.RemoveEmptyDir(t.stateDirs[i]))
	}
	return err
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

// Apply carries out the journaled mutations, then unit enablement, then OS staging.
func (t *Txn) Apply(ctx context.Context) error {
	failpoint.Hit()
	if len(t.units.disableFirst) > 0 {
		if err := t.a.Systemd.Disable(ctx, t.units.disableFirst...); err != nil {
			return err
		}
	}
	r := t.a.Root
	if err := t.journalDirs(); err != nil {
		return err
	}
	for _, o := range t.ops {
		if err := t.do(r, o); err != nil {
			return opError(o, err)
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
			return fmt.Errorf("staging OS changes with %s: %w", t.a.OS.Name(), &OSStageError{Err: err})
		}
		failpoint.Hit()
	}
	return nil
}

func (t *Txn) do(r *noderoot.Root, o op) error {
	if o.kind != opRemove {
		created, err := r.MkdirAll(path.Dir(o.path), o.parents)
		t.created = append(t.created, created...)
		if err != nil {
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
