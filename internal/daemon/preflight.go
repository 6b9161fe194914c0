package daemon

import (
	"context"
	"errors"

	"github.com/mco-dev/mco/internal/daemon/drift"
)

// blockingDrift is the drift of the current config (old) that keeps the node from moving to
// next: first the drift the monitor found, and when that one does not block (a file missing
// that next drops, drift.Blocking), the first of a full check that does. nil: the update may
// go on, and the transaction removes what is left of the missing files' records.
func (a *Agent) blockingDrift(ctx context.Context, old, next *loaded, found error) (error, error) {
	var d *drift.Error
	if !errors.As(found, &d) || len(drift.Blocking([]*drift.Error{d}, next.set)) > 0 {
		return found, nil
	}
	c, err := drift.NewChecker(a.root, old.set)
	if err != nil {
		return nil, err
	}
	all, err := c.CheckAll(ctx, a.opts.Systemd)
	if err != nil {
		return nil, err
	}
	if blocking := drift.Blocking(all, next.set); len(blocking) > 0 {
		return blocking[0], nil
	}
	a.opts.Log.Info("moving on from drift the new config drops", "node", a.opts.NodeName, "drift", found)
	return nil, nil
}
