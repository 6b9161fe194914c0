package rolloutcli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/statusview"
)

// TimedOutError ends Follow when ctx ended before the pool was Updated or Degraded; it says
// what the pool was waiting for.
type TimedOutError struct{ err error }

func (e *TimedOutError) Error() string { return e.err.Error() }
func (e *TimedOutError) Unwrap() error { return e.err }

// Follow writes pool name's rollout on w every interval, a frame only when it changed (so the
// output is a readable log too), until the pool is Updated on what its MachineConfigs render
// (nil), Degraded (an error), or ctx ends (*TimedOutError).
func Follow(ctx context.Context, w io.Writer, c client.Reader, name string, interval time.Duration) error {
	last := ""
	var pacing statusview.Pacing
	// Where the kind is not served, each list of it rediscovers every API group: ask once.
	policiesServed := true
	lastPending := ""
	for {
		pools, nodes, err := statusview.ReadPoolsAndNodes(ctx, c)
		var policies []rolloutv1.MachineConfigPoolRollout
		if err == nil && policiesServed {
			policies, policiesServed, err = statusview.ReadPolicies(ctx, c)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
		var pool *mcfgv1.MachineConfigPool
		for i := range pools {
			if pools[i].Name == name {
				pool = &pools[i]
			}
		}
		if err == nil && pool == nil {
			return fmt.Errorf("no pool %q", name)
		}
		if pool != nil && err == nil {
			pacing = statusview.PoolPacing(policies, pool)
			if frame := statusview.RolloutFrame(pool, statusview.Nodes(pools, nodes), pacing, time.Now()); frame != last {
				fmt.Fprint(w, frame)
				last = frame
			}
			switch poolcondition.RolloutOutcome(pool) {
			case poolcondition.Complete:
				// `kubectl apply` returns before the controller renders the change, so an
				// Updated pool may not have seen it yet.
				pending, err := pendingRender(ctx, c, pools, name)
				if err != nil {
					if ctx.Err() != nil {
						break // the timeout, reported below
					}
					return err
				}
				if pending != "" {
					// Never report the config before the change as the rollout's end: wait
					// for the render (or the timeout, which says what was pending).
					if pending != lastPending {
						fmt.Fprintf(w, "pool %s: %s\n", name, pending)
						lastPending = pending
					}
					break
				}
				held := ""
				if statusview.RolledBack(pool) != "" {
					held = ", where a rollback holds it (see above)"
				}
				fmt.Fprintf(w, "pool %s is updated to %s%s\n", name, pool.Status.Configuration.Name, held)
				return nil
			case poolcondition.Failed:
				return fmt.Errorf("pool %s is degraded; see `mco status`", name)
			default:
				lastPending = "" // the render came; a timeout now is about the rollout
			}
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("pool %s not updated before the timeout", name)
			if lastPending != "" {
				err = fmt.Errorf("%w; %s", err, lastPending)
			}
			if lines := pacing.Lines(time.Now()); len(lines) > 0 {
				err = fmt.Errorf("%w; %s", err, strings.Join(lines, "; "))
			}
			return &TimedOutError{err: err}
		case <-time.After(interval):
		}
	}
}

// pendingRender says whether pool's MachineConfigs, as they are on the cluster now, render to a
// config other than the pool's target: a change was applied (`kubectl apply` returns before the
// controller renders it) and the pool's Updated is about the config before it. It renders the
// pool the way `mco plan` does, with the render controller's own core. "" means nothing pending.
func pendingRender(ctx context.Context, c client.Reader, pools []mcfgv1.MachineConfigPool, name string) (string, error) {
	var mcs mcfgv1.MachineConfigList
	if err := c.List(ctx, &mcs); err != nil {
		return "", err
	}
	cluster := changeplan.Cluster{}
	for i := range pools {
		cluster.Pools = append(cluster.Pools, &pools[i])
	}
	for i := range mcs.Items {
		cluster.MachineConfigs = append(cluster.MachineConfigs, &mcs.Items[i])
	}
	report, err := changeplan.Live(cluster, changeplan.Applied{}, name)
	if err != nil {
		return "", err
	}
	for _, p := range report.Pools {
		switch {
		case p.Pool != name:
		case p.Error != "":
			// The controller will say RenderDegraded once it renders; wait for that verdict.
			return fmt.Sprintf("its MachineConfigs changed and do not render (%s); waiting for the render controller's verdict", strings.SplitN(p.Error, "\n", 2)[0]), nil
		case p.Rendered != "" && p.Rendered != p.Target:
			return fmt.Sprintf("its MachineConfigs changed: waiting for the render controller to target %s (now %s)", p.Rendered, p.Target), nil
		}
	}
	return "", nil
}
