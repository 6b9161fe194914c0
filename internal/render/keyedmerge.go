package render

import (
	"github.com/coreos/ignition/v2/config/merge"
	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// Ignition's merge re-walks the whole accumulated parent, transcript included, for every child:
// folding 200 MachineConfigs with 5,000 files is quadratic and took seconds. The big keyed
// lists (files, directories, links, units) are therefore folded here in one pass with ordered
// maps, reproducing the library's list semantics exactly:
//   - an entry whose key the child repeats in the same list is merged with the child's entry
//     (by the library, so nested rules such as append concatenation stay Ignition's) in place;
//   - files, directories and links share one key space: a child entry at a path the parent has
//     in another list replaces it, and the parent's entry disappears;
//   - child entries with new keys are appended in the child's order.
// TestKeyedMergeMatchesLibrary checks equality with the plain library fold on random configs.

func mergeEntry[T any](parent, child T) T {
	merged, _ := merge.MergeStructTranscribe(parent, child)
	return merged.(T)
}

type slot[T any] struct {
	value T
	gone  bool
}

// keyedList is one list of the result, in order, with entries that were replaced marked gone.
type keyedList[T any] struct {
	slots []slot[T]
}

func (l *keyedList[T]) add(v T) int {
	l.slots = append(l.slots, slot[T]{value: v})
	return len(l.slots) - 1
}

func (l *keyedList[T]) values() []T {
	var out []T
	for _, s := range l.slots {
		if !s.gone {
			out = append(out, s.value)
		}
	}
	return out
}

type nodeKind int

const (
	fileNode nodeKind = iota
	directoryNode
	linkNode
)

type nodeRef struct {
	kind  nodeKind
	index int
}

// storageNodes folds files, directories and links, which share the path key space.
type storageNodes struct {
	files keyedList[types.File]
	dirs  keyedList[types.Directory]
	links keyedList[types.Link]
	byKey map[string]nodeRef
}

func newStorageNodes() *storageNodes {
	return &storageNodes{byKey: map[string]nodeRef{}}
}

func (s *storageNodes) add(st types.Storage) {
	for _, f := range st.Files {
		addNode(s, &s.files, fileNode, f.Path, f)
	}
	for _, d := range st.Directories {
		addNode(s, &s.dirs, directoryNode, d.Path, d)
	}
	for _, l := range st.Links {
		addNode(s, &s.links, linkNode, l.Path, l)
	}
}

func addNode[T any](s *storageNodes, list *keyedList[T], kind nodeKind, key string, v T) {
	ref, ok := s.byKey[key]
	switch {
	case ok && ref.kind == kind:
		list.slots[ref.index].value = mergeEntry(list.slots[ref.index].value, v)
		return
	case ok:
		s.markGone(ref)
	}
	s.byKey[key] = nodeRef{kind: kind, index: list.add(v)}
}

func (s *storageNodes) markGone(ref nodeRef) {
	switch ref.kind {
	case fileNode:
		s.files.slots[ref.index].gone = true
	case directoryNode:
		s.dirs.slots[ref.index].gone = true
	case linkNode:
		s.links.slots[ref.index].gone = true
	}
}

// units folds systemd units by name.
type units struct {
	list   keyedList[types.Unit]
	byName map[string]int
}

func newUnits() *units { return &units{byName: map[string]int{}} }

func (u *units) add(us []types.Unit) {
	for _, unit := range us {
		if i, ok := u.byName[unit.Name]; ok {
			u.list.slots[i].value = mergeEntry(u.list.slots[i].value, unit)
			continue
		}
		u.byName[unit.Name] = u.list.add(unit)
	}
}
