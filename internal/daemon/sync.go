package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/protocol"
)

// sync looks at the Node and the disk and takes the next step. It is level-triggered: every
// step it takes is decided again from scratch on the next wake-up.
func (a *Agent) sync(ctx context.Context) error {
	node := a.kube.node()
	if node == nil {
		return fmt.Errorf("node %s not found", a.opts.NodeName)
	}
	if !a.s.rebootQueuedAt.IsZero() {
		if !a.rebootOverdue() {
			return nil
		}
		// Asked for, but this process still runs: the reboot was lost. settle asks again,
		// since the reboot-pending record says the committed config still waits for it.
		a.s.rebootQueuedAt = timeZero
	}
	committed, err := a.committedName()
	if err != nil {
		return err
	}
	// The disk is the truth about what the node is in (etcd may have been restored from an
	// older backup); the annotation only counts when nothing was committed yet.
	current := committed
	if current == "" {
		current = annotation(node, protocol.CurrentConfigAnnotation)
	}
	desired := annotation(node, protocol.DesiredConfigAnnotation)
	if desired == "" {
		desired = current
	}
	a.keepConfigs(current, desired)
	force, err := a.root.Exists(ForceFilePath)
	if err != nil {
		return err
	}
	// A boot into desired that the boot guard reverted: report it, and do not try desired
	// again until it changes or an admin asks.
	if failed, err := a.bootFailureHolds(node, desired, force); err != nil {
		return err
	} else if failed != nil {
		return nodeBootFailed(failed)
	}
	if current == desired && !force {
		if current == "" {
			// Nothing committed, no config on the Node: a node mco did not boot.
			return a.considerAdoption(ctx, node)
		}
		return a.settle(ctx, current, committed == "")
	}
	return a.update(ctx, current, desired, force)
}

// settle is the node in its desired config: verify the disk and what booted, have the node
// uncordoned if it was drained, and report Done.
func (a *Agent) settle(ctx context.Context, current string, writeRecord bool) error {
	l, err := a.load(ctx, current)
	if err != nil {
		return err
	}
	drifted, err := a.checkDrift(ctx, l, current)
	if err != nil {
		return err
	}
	if drifted != nil {
		a.metrics.drift.Set(nowUnix())
		return degraded("ConfigDriftDetected",
			fmt.Errorf("unexpected on-disk state validating against %s: %w", current, drifted))
	}
	a.metrics.drift.Set(0)
	if writeRecord {
		// A node that first booted from Ignition has no record yet; now that its disk is
		// verified, the record makes the disk the truth from here on.
		record, err := json.Marshal(l.mc)
		if err != nil {
			return err
		}
		err = a.root.WriteFile(apply.CurrentConfigPath, record, noderoot.WriteOptions{Perm: 0o644})
		a.forgetCommitted()
		if err != nil {
			return err
		}
	}
	// Committed, but the reboot that brings it into effect never came (the agent was killed,
	// could not reach the API server, or the reboot was lost): reboot now, whatever booted (and
	// even if the backend cannot say). After that boot /run is empty, so a mismatch then is a
	// real one.
	if pending, err := a.rebootPendingFor(current); err != nil {
		return err
	} else if pending {
		return a.rebootAgain(ctx, current)
	}
	// Done means in effect: what booted must be what the config asks of the OS, not only what
	// was staged for it.
	if reason := a.firstBootFailure(current); reason != "" {
		return degraded("FirstBootFailed", fmt.Errorf("the first-boot service could not bring the machine into %s: %s", current, reason))
	}
	booted, err := a.bootedSystem(ctx)
	if err != nil {
		return degradedRetrying("BootedSystemUnknown", err)
	}
	if ms := osimage.Verify(specOf(l), booted); len(ms) > 0 {
		return degraded("BootedConfigMismatch", osimage.MismatchError(current, ms))
	}
	// Done means in effect: a KubeletConfig's drop-in counts once the running kubelet has it.
	if err := a.kubeletDropInInEffect(l); err != nil {
		if notInEffect := (*runningkubelet.NotInEffectError)(nil); errors.As(err, &notInEffect) {
			return degraded("KubeletConfigNotInEffect", fmt.Errorf("%s is written but not in effect: %w", current, err))
		}
		return err
	}
	node := a.kube.node()
	uncordon := protocol.UncordonRequest(current)
	if drain := annotation(node, protocol.DesiredDrainAnnotation); drain != "" && drain != uncordon {
		return a.kube.patchAnnotations(ctx, map[string]*string{protocol.DesiredDrainAnnotation: &uncordon})
	}
	// A drain-started-at left means a drain began after the last acknowledgement: one withdrawn
	// for this same uncordon (a node whose blocked drain was skipped twice, spec.drain) is
	// uncordoned again before the node is Done.
	if annotation(node, protocol.DesiredDrainAnnotation) == uncordon &&
		(annotation(node, protocol.LastAppliedDrainAnnotation) != uncordon || annotation(node, protocol.DrainStartedAtAnnotation) != "") {
		return nil // the drain controller wakes us when it has uncordoned
	}
	a.s.drainRequested = timeZero
	if a.s.drainTimer != nil {
		a.s.drainTimer.Stop()
		a.s.drainTimer = nil
	}
	return a.report(ctx, protocol.NodeDone, "", map[string]*string{
		protocol.CurrentConfigAnnotation:    &current,
		protocol.PostConfigActionAnnotation: nil,
		// An adopted node is a node like any other from here on.
		protocol.AdoptionAnnotation:     nil,
		protocol.AdoptionPlanAnnotation: nil,
	})
}
