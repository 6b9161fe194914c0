package render

import (
	"github.com/coreos/ignition/v2/config/merge"
	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/internal/ignition"
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
	gone  int
}

func newKeyedList[T any](capacity int) keyedList[T] {
	return keyedList[T]{slots: make([]slot[T], 0, capacity)}
}

func (l *keyedList[T]) add(v T) int {
	l.slots = append(l.slots, slot[T]{value: v})
	return len(l.slots) - 1
}

func (l *keyedList[T]) values() []T {
	if len(l.slots)-l.gone == 0 {
		return nil
	}
	out := make([]T, 0, len(l.slots)-l.gone)
	for _, s := range l.slots {
		if !s.gone {
			out = append(out, s.value)
		}
	}
	return out
}

func (l *keyedList[T]) markGone(i int) {
	l.slots[i].gone = true
	l.gone++
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

// newStorageNodes sizes the lists and the index for folding cfgs: they hold thousands of
// entries, and growing them entry by entry copied each many times over.
func newStorageNodes(cfgs []ignition.Config) *storageNodes {
	var files, dirs, links int
	for _, cfg := range cfgs {
		files += len(cfg.Storage.Files)
		dirs += len(cfg.Storage.Directories)
		links += len(cfg.Storage.Links)
	}
	return &storageNodes{
		files: newKeyedList[types.File](files),
		dirs:  newKeyedList[types.Directory](dirs),
		links: newKeyedList[types.Link](links),
		byKey: make(map[string]nodeRef, files+dirs+links),
	}
}

// add folds one config's storage in; files get the compression marker (see mergeIgnition).
func (s *storageNodes) add(st types.Storage) {
	for _, f := range st.Files {
		addNode(s, &s.files, fileNode, f.Path, withCompressionMarker(f))
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
		s.files.markGone(ref.index)
	case directoryNode:
		s.dirs.markGone(ref.index)
	case linkNode:
		s.links.markGone(ref.index)
	}
}

// units folds systemd units by name.
type units struct {
	list   keyedList[types.Unit]
	byName map[string]int
}

func newUnits(cfgs []ignition.Config) *units {
	n := 0
	for _, cfg := range cfgs {
		n += len(cfg.Systemd.Units)
	}
	return &units{list: newKeyedList[types.Unit](n), byName: make(map[string]int, n)}
}

func (u *units) add(us []types.Unit) {
	for _, unit := range us {
		if i, ok := u.byName[unit.Name]; ok {
			u.list.slots[i].value = mergeEntry(u.list.slots[i].value, unit)
			continue
		}
		u.byName[unit.Name] = u.list.add(unit)
	}
}
