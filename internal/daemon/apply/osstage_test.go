package apply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// recordingOS is an OS backend that records Stage and Discard.
type recordingOS struct {
	osimage.None
	calls    []string
	stageErr error
}

func (r *recordingOS) Supports(string) bool { return true }
func (r *recordingOS) Stage(_ context.Context, c osimage.Change) error {
	r.calls = append(r.calls, "stage "+strings.Join(c.NewKernelArgs, " "))
	return r.stageErr
}
func (r *recordingOS) Discard(context.Context) error {
	r.calls = append(r.calls, "discard")
	return nil
}

// failingSystemd fails enablement, which runs after the file writes and before OS staging.
type failingSystemd struct{ *systemd.Systemctl }

func (failingSystemd) Enable(context.Context, ...string) error { return errors.New("enable failed") }

// TestRollbackDiscardsOnlyAStagingItStarted: a failing Stage is discarded by the rollback (and
// by Recover after a crash), a transaction that failed before staging leaves the backend alone.
func TestRollbackDiscardsOnlyAStagingItStarted(t *testing.T) {
	requireSystemctl(t)
	ctx := context.Background()
	change := &osimage.Change{KernelArgs: true, NewKernelArgs: []string{"audit=1"}}
	for _, tc := range []struct {
		name     string
		stageErr error
		sd       func(root string) systemd.Manager
		want     []string
	}{
		{"stage fails", errors.New("rpm-ostree broke"), func(root string) systemd.Manager { return systemd.New(root) },
			[]string{"stage audit=1", "discard"}},
		{"enablement fails before staging", nil, func(root string) systemd.Manager { return failingSystemd{systemd.New(root)} },
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newNodeRoot(t)
			before := snapshot(t, root)
			r, err := noderoot.Open(root)
			must(t, err)
			defer r.Close()
			os := &recordingOS{stageErr: tc.stageErr}
			a := &Applier{Root: r, Systemd: tc.sd(root), OS: os}
			txn, err := a.Begin(ctx, Request{To: "a", New: setOf(t, configA), OS: change, Record: record("a")})
			must(t, err)
			err = txn.Apply(ctx)
			if err == nil {
				t.Fatal("Apply succeeded")
			}
			// Only the backend's failure is an OSStageError (the agent counts it as a pivot error).
			if staging := (*OSStageError)(nil); errors.As(err, &staging) != (tc.stageErr != nil) {
				t.Errorf("Apply error %v: OSStageError %v, want %v", err, errors.As(err, &staging), tc.stageErr != nil)
			}
			must(t, txn.Rollback(ctx))
			if strings.Join(os.calls, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("OS backend saw %q, want %q", os.calls, tc.want)
			}
			for _, d := range diffSnapshots(before, snapshot(t, root)) {
				if !strings.Contains(d, strings.TrimPrefix(StateDir, "/")) { // the agent's own records stay
					t.Errorf("rollback left a change: %s", d)
				}
			}
		})
	}

	// A crash after staging: Recover discards.
	root := newNodeRoot(t)
	r, err := noderoot.Open(root)
	must(t, err)
	defer r.Close()
	backend := &recordingOS{}
	a := &Applier{Root: r, Systemd: systemd.New(root), OS: backend}
	txn, err := a.Begin(ctx, Request{To: "a", New: setOf(t, configA), OS: change, Record: record("a")})
	must(t, err)
	must(t, txn.Apply(ctx)) // no Commit: the agent "crashed"
	rec, err := a.Recover(ctx)
	must(t, err)
	if rec.Outcome != RolledBack || strings.Join(backend.calls, ", ") != "stage audit=1, discard" {
		t.Errorf("Recover: %+v, OS backend saw %q", rec, backend.calls)
	}
}
