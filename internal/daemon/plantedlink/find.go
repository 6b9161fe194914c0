package plantedlink

import (
	"path"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// Find reads the links in p's parents on the host and judges them (nil: p may be written).
func Find(root *noderoot.Root, what, p string) (*Refusal, error) {
	parents, err := root.ResolveParents(p)
	if err != nil {
		return nil, err
	}
	return Check(what, p, parents), nil
}

// InSet is the first path of set the agent will not write on this host, nil when it may
// write them all. Every entry counts, changed or not: a link planted under a path the node
// already has is no safer for the path being unchanged.
func InSet(root *noderoot.Root, set nodefiles.Set) (*Refusal, error) {
	// Entries share parents (a config's files are mostly in a few directories): each is
	// resolved once.
	seen := map[string]bool{}
	for _, e := range set.Entries {
		dir := path.Dir(e.Path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		what := "file"
		if e.Link != "" {
			what = "link"
		}
		if refusal, err := Find(root, what, e.Path); refusal != nil || err != nil {
			return refusal, err
		}
	}
	return nil, nil
}
