package machineconfignode

import (
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// known is the spec one object had at one generation. A MachineConfigNode's generation moves
// with every change of its spec and with nothing else (the status and the metadata leave it),
// so an object whose UID and generation match has exactly this spec.
type known struct {
	uid        types.UID
	generation int64
	spec       mcfgv1.MachineConfigNodeSpec
}

// holds reports whether k is the spec of the object meta describes now.
func (k known) holds(meta metav1.Object) bool {
	return k.uid == meta.GetUID() && k.generation == meta.GetGeneration()
}

// afterPatch is what a patch from have to next leaves known, answered with the object's metadata
// as written: next's spec, when the answer's generation is the one that patch alone gives (one
// more than have's if it changed the spec, the same otherwise). Any other generation means
// someone else changed the spec meanwhile, and the merge of both is not known (false).
func afterPatch(have, next *mcfgv1.MachineConfigNode, written metav1.Object) (known, bool) {
	generation := have.Generation
	if !equality.Semantic.DeepEqual(have.Spec, next.Spec) {
		generation++
	}
	if written.GetUID() != have.UID || written.GetGeneration() != generation {
		return known{}, false
	}
	return known{uid: have.UID, generation: generation, spec: next.Spec}, true
}

// specs remembers, by name, the spec of the MachineConfigNodes this controller read or wrote,
// so that its cache keeps their metadata alone (see Reconciler.current).
type specs struct {
	mu     sync.Mutex
	byName map[string]known
}

// of returns the spec of the object meta describes, if it is known.
func (s *specs) of(meta metav1.Object) (mcfgv1.MachineConfigNodeSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byName[meta.GetName()]
	if !ok || !k.holds(meta) {
		return mcfgv1.MachineConfigNodeSpec{}, false
	}
	return k.spec, true
}

// knows reports whether the spec of the object meta describes is known.
func (s *specs) knows(meta metav1.Object) bool {
	_, ok := s.of(meta)
	return ok
}

func (s *specs) set(name string, k known) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byName == nil {
		s.byName = map[string]known{}
	}
	s.byName[name] = k
}

func (s *specs) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byName, name)
}
