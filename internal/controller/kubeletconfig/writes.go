package kubeletconfig

import (
	"context"
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/protocol"
)

// nameTakenError: a generated name is held by a MachineConfig another object controls (say a
// second KubeletConfig recording the same suffix). Overwriting it would make the two fight.
type nameTakenError struct {
	kubeletConfig, name, owner string
}

func (e *nameTakenError) Error() string {
	return fmt.Sprintf("KubeletConfig %s: MachineConfig %s is controlled by %s; remove the %s annotation from one of them to have it renamed",
		e.kubeletConfig, e.name, e.owner, protocol.NameSuffixAnnotation)
}

// ensureMetadata records the name suffix (once) and the generated names as finalizers before
// any MachineConfig is written, so a KubeletConfig deleted right after still takes its
// MachineConfigs with it.
func (r *Reconciler) ensureMetadata(ctx context.Context, kc *mcfgv1.KubeletConfig, desired *kubeletconfig.Desired) error {
	before := kc.DeepCopy()
	if _, ok := kc.Annotations[protocol.NameSuffixAnnotation]; !ok {
		if kc.Annotations == nil {
			kc.Annotations = map[string]string{}
		}
		kc.Annotations[protocol.NameSuffixAnnotation] = desired.Suffix
	}
	for _, mc := range desired.MachineConfigs {
		if !slices.Contains(kc.Finalizers, mc.Name) {
			kc.Finalizers = append(kc.Finalizers, mc.Name)
		}
	}
	if equality.Semantic.DeepEqual(before.ObjectMeta, kc.ObjectMeta) {
		return nil
	}
	return r.Client.Patch(ctx, kc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// apply creates or updates each desired MachineConfig, leaving equal ones alone, and reports
// whether it wrote any.
func (r *Reconciler) apply(ctx context.Context, kc *mcfgv1.KubeletConfig, desired, existing []*mcfgv1.MachineConfig) (bool, error) {
	changed := false
	for _, want := range desired {
		cur := find(existing, want.Name)
		if cur == nil {
			if err := r.Client.Create(ctx, want.DeepCopy()); err != nil {
				return changed, fmt.Errorf("creating %s: %w", want.Name, err)
			}
			r.Recorder.Eventf(kc, corev1.EventTypeNormal, ReasonGenerated, "Generated %s for pool %s", want.Name, want.Labels[protocol.RoleLabel])
			changed = true
			continue
		}
		if owner := metav1.GetControllerOf(cur); owner != nil && owner.UID != kc.UID {
			return changed, &nameTakenError{kubeletConfig: kc.Name, name: cur.Name, owner: owner.Kind + " " + owner.Name}
		}
		next, differs := generatedmc.Updated(cur, want)
		if !differs {
			continue
		}
		if err := r.Client.Update(ctx, next); err != nil {
			return changed, fmt.Errorf("updating %s: %w", want.Name, err)
		}
		r.Recorder.Eventf(kc, corev1.EventTypeNormal, ReasonUpdated, "Updated %s for pool %s", want.Name, want.Labels[protocol.RoleLabel])
		changed = true
	}
	return changed, nil
}

// prune deletes kc's MachineConfigs of pools it no longer selects, then drops their finalizers.
func (r *Reconciler) prune(ctx context.Context, kc *mcfgv1.KubeletConfig, desired, existing []*mcfgv1.MachineConfig) error {
	var gone []string
	for _, mc := range existing {
		if metav1.IsControlledBy(mc, kc) && find(desired, mc.Name) == nil {
			if err := r.delete(ctx, kc, mc.Name); err != nil {
				return err
			}
			gone = append(gone, mc.Name)
		}
	}
	var stale []string
	for _, f := range kc.Finalizers {
		if kubeletconfig.IsGeneratedName(f) && find(desired, f) == nil {
			stale = append(stale, f)
		}
	}
	for _, f := range stale {
		if !slices.Contains(gone, f) {
			if err := r.delete(ctx, kc, f); err != nil {
				return err
			}
		}
	}
	return r.dropFinalizers(ctx, kc, stale)
}

// finalize deletes a deleted KubeletConfig's MachineConfigs (those its finalizers name and
// any it controls), which restores its pools' base kubelet configuration, then lets it go.
func (r *Reconciler) finalize(ctx context.Context, kc *mcfgv1.KubeletConfig) error {
	var ours []string
	for _, f := range kc.Finalizers {
		if kubeletconfig.IsGeneratedName(f) {
			ours = append(ours, f)
		}
	}
	if len(ours) == 0 {
		return nil
	}
	var mcs mcfgv1.MachineConfigList
	if err := r.Client.List(ctx, &mcs); err != nil {
		return err
	}
	for i := range mcs.Items {
		mc := &mcs.Items[i]
		if slices.Contains(ours, mc.Name) || metav1.IsControlledBy(mc, kc) {
			if err := r.delete(ctx, kc, mc.Name); err != nil {
				return err
			}
		}
	}
	return r.dropFinalizers(ctx, kc, ours)
}

// delete deletes the named MachineConfig unless another object controls it.
func (r *Reconciler) delete(ctx context.Context, kc *mcfgv1.KubeletConfig, name string) error {
	mc := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(mc); owner != nil && owner.UID != kc.UID {
		return nil
	}
	err := r.Client.Delete(ctx, mc, client.Preconditions{UID: &mc.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	r.Recorder.Eventf(kc, corev1.EventTypeNormal, ReasonDeleted, "Deleted %s", name)
	return nil
}

func (r *Reconciler) dropFinalizers(ctx context.Context, kc *mcfgv1.KubeletConfig, names []string) error {
	if len(names) == 0 {
		return nil
	}
	before := kc.DeepCopy()
	kc.Finalizers = slices.DeleteFunc(slices.Clone(kc.Finalizers), func(f string) bool { return slices.Contains(names, f) })
	return client.IgnoreNotFound(r.Client.Patch(ctx, kc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

func find(mcs []*mcfgv1.MachineConfig, name string) *mcfgv1.MachineConfig {
	for _, mc := range mcs {
		if mc.Name == name {
			return mc
		}
	}
	return nil
}

func equalStatus(a, b mcfgv1.KubeletConfigStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

func lastMessage(st mcfgv1.KubeletConfigStatus) string {
	if n := len(st.Conditions); n > 0 {
		return st.Conditions[n-1].Message
	}
	return ""
}
