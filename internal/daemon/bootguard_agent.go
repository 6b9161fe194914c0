package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// armBootGuard prepares the node to undo the update from → to by itself if its reboot leaves
// the kubelet unhealthy or the Node not Ready (bootguard): the guard's binary (a copy of this
// one) and unit on the host, enabled for the next boot, and the record naming both configs,
// the timeout, and the previous config in full. Called before the transaction starts; a
// transaction that rolls back disarms it again (disarmBootGuard), and one interrupted by a
// crash leaves a record the guard drops, since the config it names never committed.
func (a *Agent) armBootGuard(ctx context.Context, from *loaded, fromName, to string, toConfig *loaded) error {
	if fromName == "" || from.mc == nil || fromName == to {
		// Nothing committed to go back to (a node being adopted), or nothing else to go back
		// to (the force file rewriting the config the node is in).
		return nil
	}
	previous, err := json.Marshal(from.mc)
	if err != nil {
		return err
	}
	timeout, source, err := a.nodeBootTimeout(ctx, toConfig)
	if err != nil {
		return err
	}
	if err := a.installBootGuard(); err != nil {
		return fmt.Errorf("installing the boot guard (%s, %s): %w", bootguard.BinaryPath, bootguard.UnitPath, err)
	}
	rec := bootguard.Record{Node: a.opts.NodeName, From: fromName, To: to, Timeout: bootguard.Duration{Duration: timeout},
		TimeoutFrom: source, ArmedAt: time.Now().UTC(), Previous: previous}
	if bt, err := bootTime(); err == nil {
		rec.ArmedBootTime = int64(bt)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := a.root.WriteFile(bootguard.RecordPath, data, noderoot.WriteOptions{Perm: 0o600}); err != nil {
		return err
	}
	a.opts.Log.Info("armed the boot guard", "node", a.opts.NodeName, "from", fromName, "to", to, "timeout", timeout, "timeoutFrom", source)
	return nil
}

// disarmBootGuard removes the record of an update that did not commit.
func (a *Agent) disarmBootGuard() error { return a.root.Remove(bootguard.RecordPath, false) }

// nodeBootTimeout is the node boot timeout of the pool owning the rendered config (its
// controller reference, as the render controller sets it).
func (a *Agent) nodeBootTimeout(ctx context.Context, to *loaded) (time.Duration, string, error) {
	pool := ""
	if to.mc != nil {
		if owner := metav1.GetControllerOf(to.mc); owner != nil && owner.Kind == "MachineConfigPool" {
			pool = owner.Name
		}
	}
	if pool == "" {
		return rolloutv1.DefaultNodeBootTimeout, "default", nil
	}
	policies := &rolloutv1.MachineConfigPoolRolloutList{}
	if err := a.kube.client.List(ctx, policies); err != nil {
		return 0, "", fmt.Errorf("reading the MachineConfigPoolRollouts for pool %s's node boot timeout: %w", pool, err)
	}
	d, source := bootguard.Timeout(policies.Items, pool)
	return d, source, nil
}

// installBootGuard puts the guard's binary and unit on the host unless they are there as
// they should be, and enables the unit for the next boot (a wants link: no systemctl, and no
// daemon-reload, which the next boot does anyway).
func (a *Agent) installBootGuard() error {
	if err := a.installGuardBinary(); err != nil {
		return err
	}
	if _, err := a.root.MkdirAll(path.Dir(bootguard.WantsPath), noderoot.DefaultDir); err != nil {
		return err
	}
	if have, err := a.root.ReadFile(bootguard.UnitPath); err != nil || string(have) != bootguard.Unit {
		if err := a.root.WriteFile(bootguard.UnitPath, []byte(bootguard.Unit), noderoot.WriteOptions{Perm: 0o644}); err != nil {
			return err
		}
	}
	if info, err := a.root.Lstat(bootguard.WantsPath); err != nil || info.Target != bootguard.UnitPath {
		return a.root.Symlink(bootguard.WantsPath, bootguard.UnitPath, false)
	}
	return nil
}

// installGuardBinary copies this process's own binary (Options.GuardBinary) (a node build of mco: every build has
// `mco daemon boot-guard`) to BinaryPath, atomically, when what is there differs.
func (a *Agent) installGuardBinary() error {
	self, err := os.Open(a.opts.GuardBinary)
	if err != nil {
		return err
	}
	defer self.Close()
	if a.guardDigest == nil {
		want := sha256.New()
		if _, err := io.Copy(want, self); err != nil {
			return err
		}
		a.guardDigest = want.Sum(nil)
	}
	if f, err := a.root.OpenFile(bootguard.BinaryPath); err == nil {
		have := sha256.New()
		_, err = io.Copy(have, f)
		f.Close()
		if err == nil && bytes.Equal(have.Sum(nil), a.guardDigest) {
			return nil
		}
	}
	// Anything else there (a link, a directory's absence of a file, an unreadable file) is
	// replaced: the rename below swaps the entry itself, never following a link.
	if _, err := self.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := a.root.MkdirAll(path.Dir(bootguard.BinaryPath), noderoot.DefaultDir); err != nil {
		return err
	}
	return a.root.WriteFrom(bootguard.BinaryPath, self, noderoot.WriteOptions{Perm: 0o755})
}

// bootFailureHolds reports the boot guard's finding for desired, if it holds the node back:
// the node reverted a boot into desired and is not to try it again until its target changes,
// an admin sets the retry annotation after the failure, or the force file asks for it. A
// finding that no longer holds is removed.
func (a *Agent) bootFailureHolds(node *corev1.Node, desired string, force bool) (*bootguard.Failure, error) {
	failed, err := readBootFailure(a.root)
	if err != nil || failed == nil {
		return nil, err
	}
	var retryAt time.Time
	if v := annotation(node, rolloutv1.RetryAnnotation); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			a.opts.Log.Warn("ignoring an unreadable retry request", "node", a.opts.NodeName, "annotation", rolloutv1.RetryAnnotation, "value", v, "err", err)
		}
		retryAt = t
	}
	switch bootguard.ForAgent(failed, desired, retryAt, force) {
	case bootguard.Hold:
		return failed, nil
	case bootguard.Clear:
		a.opts.Log.Info("the recorded boot failure no longer holds the node back", "node", a.opts.NodeName, "failed", failed.To, "desired", desired)
		return nil, a.root.Remove(bootguard.FailedPath, false)
	}
	return nil, nil
}

// nodeBootFailed is the failure of a node held back by a boot the guard reverted.
func nodeBootFailed(failed *bootguard.Failure) error {
	return degraded("NodeBootFailed", errors.New(failed.Reason()))
}
