package containerruntime

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

	"github.com/mco-dev/mco/internal/containerruntime"
	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// nameTakenError: a generated name is held by a MachineConfig another object controls (say a
// second ContainerRuntimeConfig recording the same suffix). Overwriting it would make the two
// fight; OpenShift would.
type nameTakenError struct {
	config, name, owner string
}

func (e *nameTakenError) Error() string {
	return fmt.Sprintf("ContainerRuntimeConfig %s: MachineConfig %s is controlled by %s; remove the %s annotation from one of them to have it renamed",
		e.config, e.name, e.owner, protocol.NameSuffixAnnotation)
}

// ensureMetadata records the name suffix (once) and the generated names as finalizers before
// any MachineConfig is written, so a config deleted right after still takes them with it.
func (r *Reconciler) ensureMetadata(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, desired *containerruntime.Desired) error {
	before := cfg.DeepCopy()
	if desired.Suffix != nil {
		if cfg.Annotations == nil {
			cfg.Annotations = map[string]string{}
		}
		cfg.Annotations[protocol.NameSuffixAnnotation] = *desired.Suffix
	}
	for _, mc := range desired.MachineConfigs {
		if !slices.Contains(cfg.Finalizers, mc.Name) {
			cfg.Finalizers = append(cfg.Finalizers, mc.Name)
		}
	}
	if equality.Semantic.DeepEqual(before.ObjectMeta, cfg.ObjectMeta) {
		return nil
	}
	return r.Client.Patch(ctx, cfg, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// apply creates or updates each desired MachineConfig, leaving equal ones alone.
func (r *Reconciler) apply(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, desired, existing []*mcfgv1.MachineConfig) error {
	for _, want := range desired {
		pool := want.Labels[protocol.RoleLabel]
		cur := find(existing, want.Name)
		if cur == nil {
			if err := r.Client.Create(ctx, want.DeepCopy()); err != nil {
				return fmt.Errorf("creating %s: %w", want.Name, err)
			}
			r.Recorder.Eventf(cfg, corev1.EventTypeNormal, ReasonGenerated, "Generated %s for pool %s", want.Name, pool)
			continue
		}
		if owner := metav1.GetControllerOf(cur); owner != nil && owner.UID != cfg.UID {
			return &nameTakenError{config: cfg.Name, name: cur.Name, owner: owner.Kind + " " + owner.Name}
		}
		next, changed := generatedmc.Updated(cur, want)
		if !changed {
			continue
		}
		if err := r.Client.Update(ctx, next); err != nil {
			return fmt.Errorf("updating %s: %w", want.Name, err)
		}
		r.Recorder.Eventf(cfg, corev1.EventTypeNormal, ReasonUpdated, "Updated %s for pool %s", want.Name, pool)
	}
	return nil
}

// prune deletes cfg's MachineConfigs of pools it no longer selects, then drops their
// finalizers. (OpenShift leaves them behind until the config is deleted.)
func (r *Reconciler) prune(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, desired, existing []*mcfgv1.MachineConfig) error {
	var stale []string
	for _, mc := range existing {
		if metav1.IsControlledBy(mc, cfg) && find(desired, mc.Name) == nil {
			stale = append(stale, mc.Name)
		}
	}
	for _, f := range cfg.Finalizers {
		if containerruntime.IsGeneratedName(f) && find(desired, f) == nil && !slices.Contains(stale, f) {
			stale = append(stale, f)
		}
	}
	for _, name := range stale {
		if err := r.delete(ctx, cfg, name); err != nil {
			return err
		}
	}
	return r.dropFinalizers(ctx, cfg, stale)
}

// finalize deletes a deleted config's MachineConfigs (those its finalizers name and any it
// controls), which restores its pools' defaults, then lets it go.
func (r *Reconciler) finalize(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig) error {
	var ours []string
	for _, f := range cfg.Finalizers {
		if containerruntime.IsGeneratedName(f) {
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
	names := slices.Clone(ours)
	for i := range mcs.Items {
		if metav1.IsControlledBy(&mcs.Items[i], cfg) && !slices.Contains(names, mcs.Items[i].Name) {
			names = append(names, mcs.Items[i].Name)
		}
	}
	for _, name := range names {
		if err := r.delete(ctx, cfg, name); err != nil {
			return err
		}
	}
	return r.dropFinalizers(ctx, cfg, ours)
}

// delete deletes the named MachineConfig unless another object controls it.
func (r *Reconciler) delete(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, name string) error {
	mc := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(mc); owner != nil && owner.UID != cfg.UID {
		return nil
	}
	err := r.Client.Delete(ctx, mc, client.Preconditions{UID: &mc.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	r.Recorder.Eventf(cfg, corev1.EventTypeNormal, ReasonDeleted, "Deleted %s", name)
	return nil
}

func (r *Reconciler) dropFinalizers(ctx context.Context, cfg *mcfgv1.ContainerRuntimeConfig, names []string) error {
	if len(names) == 0 {
		return nil
	}
	before := cfg.DeepCopy()
	cfg.Finalizers = slices.DeleteFunc(slices.Clone(cfg.Finalizers), func(f string) bool { return slices.Contains(names, f) })
	return client.IgnoreNotFound(r.Client.Patch(ctx, cfg, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

func find(mcs []*mcfgv1.MachineConfig, name string) *mcfgv1.MachineConfig {
	for _, mc := range mcs {
		if mc.Name == name {
			return mc
		}
	}
	return nil
}
