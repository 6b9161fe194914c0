package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollback"
)

// ensureRendered creates the rendered config, or checks the existing one of that name: names
// are content addresses, so an existing one must hold this content. One edited by hand is put
// back, since nodes may already be running what its name promises.
func (r *Reconciler) ensureRendered(ctx context.Context, pool *mcfgv1.MachineConfigPool, desired *mcfgv1.MachineConfig) error {
	err := r.Client.Create(ctx, desired.DeepCopy())
	if err == nil {
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonRendered, "Generated %s", desired.Name)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s: %w", desired.Name, err)
	}
	existing := &mcfgv1.MachineConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: desired.Name}, existing); err != nil {
		return err
	}
	want := existing.DeepCopy()
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	maps.Copy(want.Annotations, desired.Annotations)
	if !sameSpec(existing.Spec, desired.Spec) {
		want.Spec = desired.Spec
		r.Recorder.Eventf(pool, corev1.EventTypeWarning, ReasonRenderedRestored, "Rendered config %s was modified; restored its content", desired.Name)
	}
	if equality.Semantic.DeepEqual(existing, want) {
		return nil
	}
	return r.Client.Update(ctx, want)
}

// sameSpec compares specs with the Ignition JSON normalised: the API server re-encodes
// spec.config with sorted keys, so byte equality would fail for equal content.
func sameSpec(a, b mcfgv1.MachineConfigSpec) bool {
	ca, cb := normalJSON(a.Config.Raw), normalJSON(b.Config.Raw)
	a.Config.Raw, b.Config.Raw = nil, nil
	return bytes.Equal(ca, cb) && equality.Semantic.DeepEqual(a, b)
}

func normalJSON(raw []byte) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}

// setTarget points the pool's spec.configuration at the rendered config, with its sources in
// merge order. The node controller takes it from there.
func (r *Reconciler) setTarget(ctx context.Context, pool *mcfgv1.MachineConfigPool, res *render.Result) error {
	want := mcfgv1.MachineConfigPoolStatusConfiguration{
		ObjectReference: corev1.ObjectReference{Kind: "MachineConfig", Name: res.Config.Name, APIVersion: mcfgv1.GroupVersion.String()},
		Source:          res.Sources,
	}
	if equality.Semantic.DeepEqual(pool.Spec.Configuration, want) {
		return nil
	}
	previous := pool.Spec.Configuration.Name
	patch := client.MergeFromWithOptions(pool.DeepCopy(), client.MergeFromWithOptimisticLock{})
	pool.Spec.Configuration = want
	if err := r.Client.Patch(ctx, pool, patch); err != nil {
		return fmt.Errorf("setting target of pool %s: %w", pool.Name, err)
	}
	if previous != want.Name {
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonTargetChanged, "Target config changed from %q to %s", previous, want.Name)
	}
	return nil
}

// collectGarbage deletes the pool's old rendered configs that nothing references; mcs is the
// list the reconcile already read.
func (r *Reconciler) collectGarbage(ctx context.Context, pool *mcfgv1.MachineConfigPool, mcs []mcfgv1.MachineConfig) error {
	var pools mcfgv1.MachineConfigPoolList
	var nodes corev1.NodeList
	for _, list := range []client.ObjectList{&pools, &nodes} {
		if err := r.Client.List(ctx, list); err != nil {
			return err
		}
	}
	var owned []mcfgv1.MachineConfig
	for _, mc := range mcs {
		if metav1.IsControlledBy(&mc, pool) {
			owned = append(owned, mc)
		}
	}
	refs := References(pools.Items, nodes.Items).Union(rollback.Needed(pools.Items))
	for _, name := range Garbage(owned, refs, r.Options.KeepRendered) {
		mc := &mcfgv1.MachineConfig{}
		mc.Name = name
		if err := r.Client.Delete(ctx, mc); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting unreferenced %s: %w", name, err)
		}
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonRenderedCollected, "Deleted %s: older than the newest %d and referenced by no pool, node or rollback", name, r.Options.KeepRendered)
	}
	return nil
}
