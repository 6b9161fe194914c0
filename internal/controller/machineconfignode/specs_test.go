package machineconfignode

import (
	"encoding/json"
	"reflect"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/machineconfignode"
)

// A patch's result is known only when the generation it came back with is the one the patch
// alone explains; a remembered spec holds only for the same object at the same generation.
func TestKnownSpecs(t *testing.T) {
	spec := func(desired string) mcfgv1.MachineConfigNodeSpec {
		return mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: "n"}, Pool: mcfgv1.MCOObjectReference{Name: "worker"},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: desired}}
	}
	object := func(uid string, generation int64, desired string) *mcfgv1.MachineConfigNode {
		return &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: types.UID(uid), Generation: generation}, Spec: spec(desired)}
	}
	meta := func(uid string, generation int64) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "n", UID: types.UID(uid), Generation: generation}
	}
	cases := []struct {
		name      string
		have      *mcfgv1.MachineConfigNode
		next      *mcfgv1.MachineConfigNode
		written   *metav1.ObjectMeta
		known     bool
		knownSpec string
	}{
		{"spec written alone", object("a", 3, "v1"), object("a", 3, "v2"), meta("a", 4), true, "v2"},
		{"another spec write meanwhile", object("a", 3, "v1"), object("a", 3, "v2"), meta("a", 5), false, ""},
		{"owners or annotations only", object("a", 3, "v1"), object("a", 3, "v1"), meta("a", 3), true, "v1"},
		{"owners only, another spec write meanwhile", object("a", 3, "v1"), object("a", 3, "v1"), meta("a", 4), false, ""},
		{"recreated meanwhile", object("a", 3, "v1"), object("a", 3, "v2"), meta("b", 4), false, ""},
	}
	for _, tc := range cases {
		k, ok := afterPatch(tc.have, tc.next, tc.written)
		if ok != tc.known || (ok && k.spec != spec(tc.knownSpec)) {
			t.Errorf("%s: known %v %+v, want %v %s", tc.name, ok, k.spec, tc.known, tc.knownSpec)
		}
	}

	var s specs
	s.set("n", known{uid: "a", generation: 4, spec: spec("v2")})
	if got, ok := s.of(meta("a", 4)); !ok || got != spec("v2") {
		t.Errorf("same object, same generation: %v %+v", ok, got)
	}
	for _, m := range []*metav1.ObjectMeta{meta("a", 5), meta("b", 4)} {
		if _, ok := s.of(m); ok {
			t.Errorf("spec of generation 4 of a taken for %s at %d", m.UID, m.Generation)
		}
	}
	s.forget("n")
	if _, ok := s.of(meta("a", 4)); ok {
		t.Error("a forgotten spec is still known")
	}
}

// The patch built from the fields Reconciled changes is the one diffing the whole objects
// gives: a new desired config, a new owner, a hold mirrored or released, all of them, nothing.
func TestReconciledPatch(t *testing.T) {
	have := &mcfgv1.MachineConfigNode{
		ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "m1", ResourceVersion: "7", Generation: 3, Labels: map[string]string{"l": "v"},
			Annotations:     map[string]string{"admin": "kept", rolloutv1.HoldAnnotation: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", UID: "old"}, {APIVersion: "example.com/v1", Kind: "Other", Name: "o", UID: "x"}}},
		Spec: mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: "n"}, Pool: mcfgv1.MCOObjectReference{Name: "worker"},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: "v1"}},
		Status: mcfgv1.MachineConfigNodeStatus{ObservedGeneration: 3, ConfigVersion: &mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "v1", Desired: "v1"}},
	}
	want := func(uid, desired string, annotations map[string]string) *mcfgv1.MachineConfigNode {
		w := have.DeepCopy()
		w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", UID: types.UID(uid)}}
		w.Spec.ConfigVersion.Desired = desired
		w.Annotations = annotations
		return w
	}
	held := map[string]string{rolloutv1.HoldAnnotation: "true"}
	for _, tc := range []struct {
		name string
		want *mcfgv1.MachineConfigNode
	}{
		{"desired", want("old", "v2", held)},
		{"owner", want("new", "v1", held)},
		{"released", want("old", "v1", nil)},
		{"priority", want("old", "v1", map[string]string{rolloutv1.HoldAnnotation: "true", rolloutv1.UpdatePriorityAnnotation: "5"})},
		{"all", want("new", "v2", map[string]string{rolloutv1.UpdatePriorityAnnotation: "5"})},
		{"nothing", want("old", "v1", held)},
	} {
		next, _ := machineconfignode.Reconciled(have, tc.want)
		got, err := reconciledPatch(have, next)
		if err != nil {
			t.Fatal(err)
		}
		full, err := client.MergeFrom(have).Data(next)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(full, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: patch %s, the whole objects' %s", tc.name, got, full)
		}
	}
}

// The echo of the controller's own write wakes nothing; another writer's change, a deletion
// and an object it never wrote do.
func TestNotOwnWrite(t *testing.T) {
	r := &Reconciler{}
	r.specs.set("n", known{uid: "a", generation: 4})
	obj := func(uid string, generation int64) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: types.UID(uid), Generation: generation}}
	}
	p := r.notOwnWrite()
	if p.Update(event.UpdateEvent{ObjectOld: obj("a", 3), ObjectNew: obj("a", 4)}) {
		t.Error("the echo of its own write passed")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: obj("a", 4), ObjectNew: obj("a", 5)}) {
		t.Error("another writer's change was dropped")
	}
	if p.Create(event.CreateEvent{Object: obj("a", 4)}) || !p.Create(event.CreateEvent{Object: obj("b", 1)}) {
		t.Error("creations: its own passed, or another dropped")
	}
	if !p.Delete(event.DeleteEvent{Object: obj("a", 4)}) {
		t.Error("a deletion was dropped")
	}
}
