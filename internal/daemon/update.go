package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/daemon/plantedlink"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollout"
)

var timeZero time.Time

// update moves the node from current to desired: preflight drift check, reconcilability, OS
// changes the host can apply, plan (which may refuse the update), drain, apply, post actions or
// reboot. Each early return is a wait, an error the loop retries, or a failure (failure.go)
// the loop reports on the Node.
func (a *Agent) update(ctx context.Context, current, desired string, force bool) error {
	old, err := a.load(ctx, current)
	if err != nil {
		return degradedRetrying("FailedToLoadConfig", err)
	}
	next, err := a.load(ctx, desired)
	if err != nil {
		return degradedRetrying("FailedToLoadConfig", err)
	}
	if current != "" && !force {
		drifted, err := a.checkDrift(ctx, old, current)
		if err != nil {
			return err
		}
		if drifted != nil {
			if drifted, err = a.blockingDrift(ctx, old, next, drifted); err != nil {
				return err
			}
		}
		if drifted != nil {
			return degraded("PreflightConfigDriftCheckFailed",
				fmt.Errorf("unexpected on-disk state validating against %s: %w", current, drifted))
		}
	}
	if err := a.markWorking(ctx); err != nil {
		return err
	}
	// MachineConfiguration cluster: the disruption policy, and the irreconcilable changes it allows.
	policies, err := a.kube.policies(ctx)
	if err != nil {
		return err
	}
	if current != "" {
		if vs := render.CheckReconcilable(old.ign, next.ign, specOf(old).FIPS, next.mc.Spec.FIPS, policies.Irreconcilable); len(vs) > 0 {
			return &failure{state: protocol.NodeUnreconcilable, eventReason: "FailedToReconcile", err: unreconcilable(current, desired, vs)}
		}
	}
	// A path the host leads elsewhere with a planted link is refused before any drain or
	// write, and before anything is read through the link. Retried: the host's admin may
	// remove the link, and nothing else would wake the agent for that.
	if refusal, err := plantedlink.InSet(a.root, next.set); err != nil {
		return err
	} else if refusal != nil {
		return degradedRetrying("UpdateRefused", fmt.Errorf("refusing %s, nothing was drained or written: %w", desired, refusal))
	}
	// A file the host's own layout uses for something else is refused before any drain or write.
	if err := a.hostConflict(desired, old, next); err != nil {
		if conflict := (*hostlayout.ConflictError)(nil); errors.As(err, &conflict) {
			return degraded("HostFileConflict", err)
		}
		return degradedRetrying("HostFileUnreadable", err)
	}
	if next.hostErr != nil {
		return degraded("UpdateRefused", fmt.Errorf("refusing %s, nothing was drained or written: %w", desired, next.hostErr))
	}
	if refusal, err := a.kubeletDropInRefusal(next); err != nil {
		return err
	} else if refusal != nil {
		return degraded("UpdateRefused", fmt.Errorf("refusing %s, nothing was drained or written: %w", desired, refusal))
	}
	// What the OS backend cannot apply is refused here, before any drain or write.
	osChange, err := a.osChange(ctx, specOf(old), next.mc.Spec, force)
	if unsupported := (*osimage.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return degraded("UnsupportedOSChange", fmt.Errorf("cannot move to %s: %w", desired, err))
	}
	if err != nil { // only asking the backend what booted fails here
		return degradedRetrying("BootedSystemUnknown", err)
	}
	diff := plan.DiffParsed(specOf(old), next.mc.Spec, old.ign, next.ign)
	if current == "" && !force {
		// Nothing committed: a node mco did not boot, being adopted (or a new node whose seed
		// was lost). The move is from what the host has, not from nothing: a file already as
		// the config wants it changes nothing and asks for no restart or reboot.
		if diff, _, err = a.hostDiff(ctx, next); err != nil {
			return err
		}
	}
	rt, err := a.runtime()
	if err != nil {
		return err
	}
	hostlayout.AdjustDiff(rt, &diff)
	diff.Force = force
	// A move from a committed config whose reboot never came still owes that reboot: applied
	// without one, the current config's reboot-only changes would never take effect.
	if diff.RebootPending, err = a.rebootPendingFor(current); err != nil {
		return err
	}
	// The plan reboots for what is staged, nothing else: osChange dropped what the booted
	// system already has.
	applyOSChange(&diff, osChange)
	pl := plan.Compute(diff, policies)
	hostlayout.AdjustPlan(rt, &pl)
	if len(pl.Refused) > 0 {
		return degraded("UpdateRefused", fmt.Errorf("refusing %s, nothing was drained or written: %s",
			desired, strings.Join(pl.Refused, "; ")))
	}
	if update := current + "→" + desired; a.s.plannedUpdate != update {
		a.s.plannedUpdate = update
		a.opts.Log.Info("planned the update", "node", a.opts.NodeName, "from", current, "to", desired,
			"actions", pl.String(), "drain", pl.NeedsDrain(), "drainReason", pl.DrainReason())
	}
	prepared := machineconfignode.Step{Kind: machineconfignode.Prepared, Current: current, Desired: desired,
		Actions: pl.String(), Drain: pl.NeedsDrain()}
	if pl.NeedsDrain() {
		// The update waits here for its drain, and its reboot follows: show it prepared now.
		a.publishStep(ctx, prepared)
		if waiting, err := a.awaitDrain(ctx, desired); waiting || err != nil {
			return err
		}
	} else {
		// Nothing to wait for before Done (or a failure), which is written on this pass or the
		// next: the step goes with it, with this moment as its time, and the update costs one
		// status write instead of two (in a large rollout these writes, of a CRD with CEL rules, are
		// the API server's costliest: bench/rollout -profile).
		a.noteStep(prepared)
	}
	// The last moment to give the update up having changed nothing (supersede.go).
	if superseded, err := a.superseded(ctx, desired); superseded || err != nil {
		return err
	}
	req := apply.Request{From: current, To: desired, Old: old.set, New: next.set, Force: force}
	if !osChange.Empty() {
		req.OS = &osChange
	}
	if req.Record, err = json.Marshal(next.mc); err != nil {
		return err
	}
	if pl.NeedsReboot() {
		// Before the commit: once desired is committed, nothing else remembers that it still
		// needs the reboot (a crash, or an API server that is down when the agent marks the
		// Node, would leave the node in a committed config it never booted).
		if err := a.markRebootPending(desired); err != nil {
			return err
		}
		// Before the transaction too: the reboot it queues must find the guard armed, and a
		// host without it would be stranded by a config that breaks the kubelet.
		if err := a.armBootGuard(ctx, old, current, desired, next); err != nil {
			return &failure{state: protocol.NodeDegraded, eventReason: "BootGuardUnavailable",
				err: fmt.Errorf("refusing %s, nothing was written: %w", desired, err), retry: err}
		}
	}
	// A stop (SIGTERM: the agent's pod replaced by an upgrade, or deleted) must not cut the
	// transaction short: its systemctl calls would fail on the canceled context and the
	// rollback with them, for no fault of the config. It finishes or rolls back under a
	// context the stop does not cancel; the pod's grace period bounds it (the kubelet's SIGKILL
	// after it is a crash, which the journal covers). A reboot it needs is left to the next
	// agent (reboot-pending, below).
	if err := a.apply(context.WithoutCancel(ctx), req, pl); err != nil {
		if pl.NeedsReboot() {
			// The guard record is part of the update: it goes with the rolled-back transaction.
			err = errors.Join(err, a.disarmBootGuard())
		}
		return degradedRetrying("UpdateFailed", err)
	}
	a.noteStep(machineconfignode.Step{Kind: machineconfignode.Applied, Current: current, Desired: desired, Reboot: pl.NeedsReboot(),
		OS: req.OS != nil, SSH: diff.SSHKeys || diff.Password, Actions: pl.String()})
	if force {
		if err := a.root.Remove(ForceFilePath, false); err != nil {
			return err
		}
	}
	if pl.NeedsReboot() {
		if err := ctx.Err(); err != nil {
			// Stopped during the transaction: the next agent finds reboot-pending and reboots.
			return err
		}
		return a.reboot(ctx, desired, causes(pl))
	}
	if err := a.clearRebootPending(); err != nil {
		return err
	}
	a.kube.event(corev1.EventTypeNormal, "Updated", "Applied %s without a reboot (%s)", desired, pl)
	a.poke() // settle into the new config on the next pass
	return nil
}

func specOf(l *loaded) mcfgv1.MachineConfigSpec {
	if l.mc == nil {
		return mcfgv1.MachineConfigSpec{}
	}
	return l.mc.Spec
}

func unreconcilable(current, desired string, vs []render.Violation) error {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return fmt.Errorf("cannot move from %s to %s on a running node: %s", current, desired, strings.Join(parts, "; "))
}

// markWorking reports Working unless the node is already reporting a failure: a retry of a
// failed update must not hide the failure between attempts.
func (a *Agent) markWorking(ctx context.Context) error {
	switch protocol.NodeState(annotation(a.kube.node(), protocol.StateAnnotation)) {
	case protocol.NodeDegraded, protocol.NodeUnreconcilable, protocol.NodeWorking:
		return nil
	}
	return a.report(ctx, protocol.NodeWorking, "", nil)
}

// osChange is what the OS backend is to stage for the move from prev to next, or an
// *osimage.UnsupportedError naming the first field this host cannot bring into effect.
//
// A field the backend cannot apply counts only where the booted system lacks what next wants
// of it: a config that drops kernel arguments the host never had, or goes back to the default
// kernel, is nothing to refuse (and refusing it would keep a node from the config that
// repairs it). A forced update (the force file) also stages whatever of next the booted system
// lacks, so it repairs a node whose staging was lost.
func (a *Agent) osChange(ctx context.Context, prev, next mcfgv1.MachineConfigSpec, force bool) (osimage.Change, error) {
	b := a.opts.OS
	c := osimage.ChangeBetween(prev, next)
	if !force && osimage.Refuse(b, c, next) == nil {
		return c, nil
	}
	booted, err := a.bootedSystem(ctx)
	if err != nil {
		return c, err
	}
	need := osimage.Needed(next, booted)
	if force {
		c = withNeeded(c, need)
	}
	if !b.Supports(osimage.FieldOSImageURL) && need.OSImageURL == "" {
		c.OSImageURL = ""
	}
	if !b.Supports(osimage.FieldKernelArguments) && !need.KernelArgs {
		c.KernelArgs, c.OldKernelArgs, c.NewKernelArgs = false, nil, nil
	}
	if !b.Supports(osimage.FieldExtensions) && !need.ExtensionsChanged {
		c.ExtensionsChanged, c.OldExtensions, c.NewExtensions = false, nil, nil
	}
	if !b.Supports(osimage.FieldKernelType) && !need.KernelTypeChanged {
		c.KernelTypeChanged = false
	}
	if booted.FIPS {
		next.FIPS = false // already in FIPS mode: nothing to apply
	}
	return c, osimage.Refuse(b, c, next)
}

// withNeeded adds to c what need stages: kernel arguments remove both what the old config set
// and any copy already there, then append the new config's once.
func withNeeded(c, need osimage.Change) osimage.Change {
	if c.OSImageURL == "" {
		c.OSImageURL = need.OSImageURL
	}
	if need.KernelArgs {
		for _, arg := range need.OldKernelArgs {
			if !slices.Contains(c.OldKernelArgs, arg) {
				c.OldKernelArgs = append(c.OldKernelArgs, arg)
			}
		}
		c.KernelArgs, c.NewKernelArgs = true, need.NewKernelArgs
	}
	if need.KernelTypeChanged {
		c.KernelTypeChanged, c.KernelType = true, need.KernelType
	}
	if need.ExtensionsChanged {
		c.ExtensionsChanged, c.NewExtensions = true, need.NewExtensions
	}
	return c
}

// awaitDrain asks the drain controller to drain the node and reports whether to keep waiting.
// A drain still in effect from an earlier target is not asked for again, and no drain is asked
// for a target already superseded (supersede.go).
func (a *Agent) awaitDrain(ctx context.Context, desired string) (bool, error) {
	node := a.kube.node()
	want := protocol.DrainRequest(desired)
	if annotation(node, protocol.DesiredDrainAnnotation) != want {
		if rollout.DrainedForUpdate(node) {
			a.opts.Log.Info("moving to the new target under the drain already in effect", "node", a.opts.NodeName,
				"drain", annotation(node, protocol.DesiredDrainAnnotation), "desired", desired)
			a.noteStep(machineconfignode.Step{Kind: machineconfignode.Drained, Desired: desired})
			return false, nil
		}
		superseded, err := a.kube.requestDrain(ctx, desired, want)
		if superseded {
			a.abandon(desired, annotation(a.kube.node(), protocol.DesiredConfigAnnotation))
		}
		if superseded || err != nil {
			return true, err
		}
		a.s.drainRequested = time.Now()
		a.kube.event(corev1.EventTypeNormal, "Drain", "Draining node to update to %s", desired)
		return true, nil
	}
	if annotation(node, protocol.LastAppliedDrainAnnotation) == want {
		a.noteStep(machineconfignode.Step{Kind: machineconfignode.Drained, Desired: desired})
		return false, nil
	}
	if blocked := annotation(node, protocol.DrainBlockedAnnotation); blocked != "" {
		a.publishStep(ctx, machineconfignode.Step{Kind: machineconfignode.DrainBlocked, Desired: desired, Message: blocked})
	}
	if a.s.drainRequested.IsZero() {
		a.s.drainRequested = time.Now()
	}
	if waited := time.Since(a.s.drainRequested); waited > a.opts.DrainTimeout {
		return true, degraded("DrainTimeout",
			fmt.Errorf("the drain for %s was not carried out within %s", desired, a.opts.DrainTimeout.Round(time.Second)))
	}
	if a.s.drainTimer == nil { // re-check the timeout even if the Node never changes
		a.s.drainTimer = time.AfterFunc(a.opts.DrainTimeout-time.Since(a.s.drainRequested)+time.Second, a.poke)
	}
	return true, nil
}

// apply writes the config as one transaction; any failure, including a failing service
// reload, rolls everything back.
func (a *Agent) apply(ctx context.Context, req apply.Request, pl plan.Plan) error {
	a.stopMonitor()
	started := time.Now()
	txn, err := a.applier.Begin(ctx, req)
	if err != nil {
		return fmt.Errorf("preparing %s: %w", req.To, err)
	}
	err = txn.Apply(ctx)
	if staging := (*apply.OSStageError)(nil); errors.As(err, &staging) {
		a.metrics.pivotErrors.Inc()
	}
	if err == nil && !pl.NeedsReboot() {
		err = a.postActions(ctx, pl)
	}
	if err != nil {
		if rbErr := txn.Rollback(ctx); rbErr != nil {
			return fmt.Errorf("applying %s: %w (and rolling back: %v)", req.To, err, rbErr)
		}
		return fmt.Errorf("applying %s (rolled back): %w", req.To, err)
	}
	err = txn.Commit(ctx)
	a.forgetCommitted()
	if err != nil {
		// Recover settles the root in one config or the other, whichever the disk says.
		_, rerr := a.applier.Recover(ctx)
		return errors.Join(fmt.Errorf("committing %s: %w", req.To, err), rerr)
	}
	a.metrics.applySeconds.Observe(time.Since(started).Seconds())
	return nil
}

func (a *Agent) postActions(ctx context.Context, pl plan.Plan) error {
	sd := a.opts.Systemd
	for _, act := range pl.Actions {
		var err error
		switch act.Type {
		case plan.DaemonReload:
			err = sd.DaemonReload(ctx)
		case plan.Reload:
			err = sd.Reload(ctx, act.Unit)
		case plan.Restart:
			err = sd.Restart(ctx, act.Unit)
		}
		if err != nil {
			return fmt.Errorf("post-update action %s: %w", act, err)
		}
	}
	return nil
}

func (a *Agent) reboot(ctx context.Context, desired, why string) error {
	rebooting := protocol.PostConfigActionRebooting
	if err := a.kube.patchAnnotations(ctx, map[string]*string{protocol.PostConfigActionAnnotation: &rebooting}); err != nil {
		// The annotation only tells others; the config is committed and waits for this reboot.
		a.opts.Log.Error("could not mark the Node Rebooting; rebooting anyway", "node", a.opts.NodeName, "err", err)
	}
	reason := "Node will reboot into config " + desired
	a.kube.eventNow(ctx, corev1.EventTypeNormal, "Reboot", "%s (%s)", reason, why)
	a.publishStatus(ctx) // the last chance before the reboot ends this process
	if err := a.opts.Rebooter.Reboot(ctx, reason); err != nil {
		a.metrics.rebootsFailed.Inc()
		err = fmt.Errorf("config %s is written but the reboot failed: %w", desired, err)
		return degradedRetrying("RebootFailed", err)
	}
	a.metrics.reboots.Inc()
	a.s.rebootQueuedAt = time.Now()
	a.s.rebootRequests++
	if a.s.rebootTimer != nil {
		a.s.rebootTimer.Stop()
	}
	a.s.rebootTimer = time.AfterFunc(a.opts.RebootTimeout, a.poke)
	return nil
}

func causes(pl plan.Plan) string {
	var parts []string
	for _, c := range pl.Causes {
		if len(parts) == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(pl.Causes)-5))
			break
		}
		parts = append(parts, c.Change+": "+c.Rule)
	}
	return strings.Join(parts, "; ")
}
