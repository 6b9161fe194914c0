package machineconfignode

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
