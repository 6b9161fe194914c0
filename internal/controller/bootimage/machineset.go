package bootimage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/stream-metadata-go/stream"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/protocol"
)

// reconcileMachineSet brings one enrolled MachineSet to the stream's boot image and counts the
// outcome in tally. The returned error is only for API failures worth retrying; they are
// counted in tally too.
func (r *Reconciler) reconcileMachineSet(ctx context.Context, ms *machinev1beta1.MachineSet, st *stream.Stream, history bootimage.PatchHistory, tally *bootimage.Tally) error {
	logger := log.FromContext(ctx).WithValues("machineSet", ms.Name)
	failed := func(err error) {
		tally.Errors = append(tally.Errors, fmt.Sprintf("%s: %v", ms.Name, err))
	}
	d, err := bootimage.Decide(ms, st, bootimage.Settings{DefaultArchitecture: r.Options.DefaultArchitecture, UseManagedUserData: r.Options.UseManagedUserData})
	if err != nil {
		failed(err)
		return nil
	}
	if d.Skip != nil {
		logger.V(1).Info("skipping MachineSet", "reason", d.Skip.Reason, "detail", d.Skip.Detail)
		tally.Skipped = append(tally.Skipped, fmt.Sprintf("%s (%s)", ms.Name, d.Skip.Reason))
		return nil
	}
	// The user data goes first: a current boot image cannot read a spec 2 stub, so a MachineSet
	// must never point at the new image while its stub is still spec 2.
	if err := r.prepareUserData(ctx, ms, d.UserDataSecret); err != nil {
		failed(err)
		return retryable(err)
	}
	if d.ProviderSpec == nil {
		tally.UpToDate++
		return nil
	}
	if v := history.Patch(ms.Name, d.ProviderSpec); !v.Allowed {
		err := bootimage.HotLoopError(ms.Name)
		if v.FirstRefusal {
			r.Recorder.Event(ms, corev1.EventTypeWarning, ReasonHotLoop, err.Error())
		}
		failed(err)
		return nil
	}
	patched := ms.DeepCopy()
	patched.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: d.ProviderSpec}
	// A merge patch of the difference: only the image fields change, so a concurrent edit of
	// anything else (replicas, labels) is neither lost nor a conflict.
	if err := r.Client.Patch(ctx, patched, client.MergeFrom(ms)); err != nil {
		failed(fmt.Errorf("patching: %w", err))
		return err
	}
	logger.Info("patched MachineSet boot image", "stream", st.Stream, "architecture", d.Architecture)
	r.Recorder.Eventf(ms, corev1.EventTypeNormal, ReasonBootImageUpdated,
		"Updated the boot image of MachineSet %s to the %s image of stream %s", ms.Name, d.Architecture, st.Stream)
	tally.Patched++
	return nil
}

// prepareUserData makes sure the user-data Secret a MachineSet boots with can be read by a
// current boot image: with UseManagedUserData the managed Secret must exist (the user-data
// controller writes it); otherwise a spec 2 stub is upgraded in place.
func (r *Reconciler) prepareUserData(ctx context.Context, ms *machinev1beta1.MachineSet, name string) error {
	if name == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: r.Options.MachineAPINamespace, Name: name}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, key, sec); err != nil {
		if apierrors.IsNotFound(err) && r.Options.UseManagedUserData {
			return fmt.Errorf("user-data Secret %s does not exist; the user-data controller (mco controller --server-host) writes it", key)
		}
		return fmt.Errorf("reading user-data Secret %s: %w", key, err)
	}
	if r.Options.UseManagedUserData {
		return nil
	}
	out, from, err := bootimage.UpgradeStub(sec.Data[protocol.UserDataKey], r.Options.StubSpecVersion)
	if err != nil || out == nil {
		if err != nil {
			return fmt.Errorf("user-data Secret %s: %w", key, err)
		}
		return nil
	}
	upgraded := sec.DeepCopy()
	upgraded.Data[protocol.UserDataKey] = out
	if upgraded.Annotations == nil {
		upgraded.Annotations = map[string]string{}
	}
	upgraded.Annotations[protocol.StubIgnitionUpgradedToAnnotation] = r.Options.StubSpecVersion.String()
	upgraded.Annotations[protocol.StubIgnitionUpgradedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
	// Update, not patch: the resourceVersion makes a concurrent edit of the stub a conflict
	// (retried) instead of being overwritten by a translation of the old content.
	if err := r.Client.Update(ctx, upgraded); err != nil {
		return fmt.Errorf("upgrading user-data Secret %s: %w", key, err)
	}
	r.Recorder.Eventf(upgraded, corev1.EventTypeNormal, ReasonStubUpgraded,
		"Upgraded the pointer Ignition config from spec %s to %s for MachineSet %s", from, r.Options.StubSpecVersion, ms.Name)
	return nil
}

// retryable keeps API failures (worth a backoff retry) and drops what only an admin can fix.
func retryable(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
