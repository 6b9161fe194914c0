package generated

import (
	"context"
	"fmt"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// Event reasons, on the generating object.
const (
	ReasonGenerated = "MachineConfigGenerated"
	ReasonUpdated   = "MachineConfigUpdated"
	ReasonDeleted   = "MachineConfigDeleted"
)

// Writer writes the generated MachineConfigs of one kind of object.
type Writer struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Kind names the objects in errors ("KubeletConfig"); typed objects read through a client
	// carry no kind of their own.
	Kind string
	// IsGeneratedName tells the finalizers that name an object's MachineConfigs from any other.
	IsGeneratedName func(string) bool
}

// NameTakenError: a generated name is held by a MachineConfig another object controls (say a
// second config of the kind recording the same suffix). Overwriting it would make the two fight.
type NameTakenError struct {
	Kind, Object, Name, Owner string
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("%s %s: MachineConfig %s is controlled by %s; remove the %s annotation from one of them to have it renamed",
		e.Kind, e.Object, e.Name, e.Owner, protocol.NameSuffixAnnotation)
}

// EnsureMetadata records suffix (when given and obj has none yet: it is recorded once) and the
// desired MachineConfigs' names as finalizers before any is written, so an object deleted
// right after still takes its MachineConfigs with it.
func (w Writer) EnsureMetadata(ctx context.Context, obj client.Object, suffix *string, desired []*mcfgv1.MachineConfig) error {
	before := obj.DeepCopyObject().(client.Object)
	if _, recorded := obj.GetAnnotations()[protocol.NameSuffixAnnotation]; suffix != nil && !recorded {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[protocol.NameSuffixAnnotation] = *suffix
		obj.SetAnnotations(annotations)
	}
	finalizers := obj.GetFinalizers()
	for _, mc := range desired {
		if !slices.Contains(finalizers, mc.Name) {
			finalizers = append(finalizers, mc.Name)
		}
	}
	obj.SetFinalizers(finalizers)
	if equality.Semantic.DeepEqual(before.GetAnnotations(), obj.GetAnnotations()) &&
		equality.Semantic.DeepEqual(before.GetFinalizers(), obj.GetFinalizers()) {
		return nil
	}
	return w.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// Apply creates or updates each desired MachineConfig, leaving equal ones alone, and reports
// whether it wrote any. A name another object controls stops it with a *NameTakenError before
// anything is written: the object is reported refused, so no pool may have been given its
// MachineConfig.
func (w Writer) Apply(ctx context.Context, obj client.Object, desired, existing []*mcfgv1.MachineConfig) (wrote bool, err error) {
	for _, want := range desired {
		if cur := find(existing, want.Name); cur != nil {
			if owner := metav1.GetControllerOf(cur); owner != nil && owner.UID != obj.GetUID() {
				return false, &NameTakenError{Kind: w.Kind, Object: obj.GetName(), Name: cur.Name, Owner: owner.Kind + " " + owner.Name}
			}
		}
	}
	for _, want := range desired {
		pool := want.Labels[protocol.RoleLabel]
		cur := find(existing, want.Name)
		if cur == nil {
			if err := w.Client.Create(ctx, want.DeepCopy()); err != nil {
				return wrote, fmt.Errorf("creating %s: %w", want.Name, err)
			}
			w.Recorder.Eventf(obj, corev1.EventTypeNormal, ReasonGenerated, "Generated %s for pool %s", want.Name, pool)
			wrote = true
			continue
		}
		next, differs := generatedmc.Updated(cur, want)
		if !differs {
			continue
		}
		if err := w.Client.Update(ctx, next); err != nil {
			return wrote, fmt.Errorf("updating %s: %w", want.Name, err)
		}
		w.Recorder.Eventf(obj, corev1.EventTypeNormal, ReasonUpdated, "Updated %s for pool %s", want.Name, pool)
		wrote = true
	}
	return wrote, nil
}

// Prune deletes obj's MachineConfigs of pools it no longer selects (those it controls, then
// those only its finalizers still name), then drops those finalizers. (OpenShift leaves them
// behind until the object is deleted.)
func (w Writer) Prune(ctx context.Context, obj client.Object, desired, existing []*mcfgv1.MachineConfig) error {
	var gone []string
	for _, mc := range existing {
		if metav1.IsControlledBy(mc, obj) && find(desired, mc.Name) == nil {
			if err := w.delete(ctx, obj, mc.Name); err != nil {
				return err
			}
			gone = append(gone, mc.Name)
		}
	}
	var stale []string
	for _, f := range obj.GetFinalizers() {
		if w.IsGeneratedName(f) && find(desired, f) == nil {
			stale = append(stale, f)
		}
	}
	for _, name := range stale {
		if !slices.Contains(gone, name) {
			if err := w.delete(ctx, obj, name); err != nil {
				return err
			}
		}
	}
	return w.dropFinalizers(ctx, obj, stale)
}

// Finalize deletes a deleted object's MachineConfigs (those its finalizers name, listed or
// not yet, and any other it controls), which restores its pools' defaults, then lets it go.
func (w Writer) Finalize(ctx context.Context, obj client.Object) error {
	ours := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return !w.IsGeneratedName(f) })
	if len(ours) == 0 {
		return nil
	}
	var mcs mcfgv1.MachineConfigList
	if err := w.Client.List(ctx, &mcs); err != nil {
		return err
	}
	names := slices.Clone(ours)
	for i := range mcs.Items {
		if metav1.IsControlledBy(&mcs.Items[i], obj) && !slices.Contains(names, mcs.Items[i].Name) {
			names = append(names, mcs.Items[i].Name)
		}
	}
	for _, name := range names {
		if err := w.delete(ctx, obj, name); err != nil {
			return err
		}
	}
	return w.dropFinalizers(ctx, obj, ours)
}

// delete deletes the named MachineConfig unless another object controls it.
func (w Writer) delete(ctx context.Context, obj client.Object, name string) error {
	mc := &mcfgv1.MachineConfig{}
	if err := w.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(mc); owner != nil && owner.UID != obj.GetUID() {
		return nil
	}
	err := w.Client.Delete(ctx, mc, client.Preconditions{UID: &mc.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	w.Recorder.Eventf(obj, corev1.EventTypeNormal, ReasonDeleted, "Deleted %s", name)
	return nil
}

func (w Writer) dropFinalizers(ctx context.Context, obj client.Object, names []string) error {
	if len(names) == 0 {
		return nil
	}
	before := obj.DeepCopyObject().(client.Object)
	obj.SetFinalizers(slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return slices.Contains(names, f) }))
	return client.IgnoreNotFound(w.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

func find(mcs []*mcfgv1.MachineConfig, name string) *mcfgv1.MachineConfig {
	for _, mc := range mcs {
		if mc.Name == name {
			return mc
		}
	}
	return nil
}
