package registries

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/registries"
)

// apply creates or updates each desired MachineConfig, leaving equal ones alone. Events go on
// the image config when there is one, else on the MachineConfig.
func (r *Reconciler) apply(ctx context.Context, c registries.Cluster, desired, existing []*mcfgv1.MachineConfig) error {
	for _, want := range desired {
		cur := find(existing, want.Name)
		if cur == nil {
			if err := r.Client.Create(ctx, want.DeepCopy()); err != nil {
				return fmt.Errorf("creating %s: %w", want.Name, err)
			}
			r.event(c, want, ReasonGenerated, "Generated %s for pool %s", want.Name, want.Labels[protocol.RoleLabel])
			continue
		}
		next, changed := generatedmc.Updated(cur, want)
		if !changed {
			continue
		}
		if err := r.Client.Update(ctx, next); err != nil {
			return fmt.Errorf("updating %s: %w", want.Name, err)
		}
		r.event(c, next, ReasonUpdated, "Updated %s for pool %s", want.Name, want.Labels[protocol.RoleLabel])
	}
	return nil
}

// prune deletes registries MachineConfigs nothing asks for any more: every one when there is no
// image config and no mirror set, else those of pools that are gone or no longer built-in.
func (r *Reconciler) prune(ctx context.Context, c registries.Cluster, desired, existing []*mcfgv1.MachineConfig) error {
	for _, mc := range existing {
		if !isOurs(mc) || find(desired, mc.Name) != nil {
			continue
		}
		err := r.Client.Delete(ctx, mc, client.Preconditions{UID: &mc.UID})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("deleting %s: %w", mc.Name, err)
		}
		r.event(c, mc, ReasonDeleted, "Deleted %s", mc.Name)
	}
	return nil
}

// isOurs: a registries MachineConfig by name (of the pool its role names) that a controller
// generated; an admin's MachineConfig of that name without the annotation is left alone.
func isOurs(mc *mcfgv1.MachineConfig) bool {
	_, generated := mc.Annotations[protocol.GeneratedByControllerVersionAnnotation]
	return generated && mc.Name == registries.GeneratedName(mc.Labels[protocol.RoleLabel])
}

func (r *Reconciler) event(c registries.Cluster, mc *mcfgv1.MachineConfig, reason, format string, args ...any) {
	var obj runtime.Object = mc
	if c.Image != nil {
		obj = c.Image
	}
	r.Recorder.Eventf(obj, corev1.EventTypeNormal, reason, format, args...)
}

func find(mcs []*mcfgv1.MachineConfig, name string) *mcfgv1.MachineConfig {
	for _, mc := range mcs {
		if mc.Name == name {
			return mc
		}
	}
	return nil
}

// forMachineConfig: our own MachineConfigs (put back when edited or deleted) and those that may
// be a base (they write registries.conf or policy.json); not rendered ones.
func forMachineConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	mc, ok := obj.(*mcfgv1.MachineConfig)
	if !ok {
		return nil
	}
	if owner := metav1.GetControllerOf(mc); owner != nil && owner.Kind == "MachineConfigPool" {
		return nil
	}
	if strings.HasSuffix(mc.Name, "-generated-registries") || bytes.Contains(mc.Spec.Config.Raw, []byte(registries.RegistriesConfPath)) ||
		bytes.Contains(mc.Spec.Config.Raw, []byte(registries.PolicyJSONPath)) {
		return enqueue(ctx, obj)
	}
	return nil
}
