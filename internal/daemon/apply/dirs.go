package apply

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/plantedlink"
)

// dirsToCreate lists, outermost first and once each, the directories the ops' parents lack
// now. A parent that exists as something other than a directory, or holds a link planted on
// the host (package plantedlink), refuses the transaction: Begin calls it, and Apply again
// before its first write, so a link planted in between is refused too.
func dirsToCreate(r *noderoot.Root, ops []op) ([]string, error) {
	seenParent, seenDir := map[string]bool{}, map[string]bool{}
	var dirs []string
	for _, o := range ops {
		parent := path.Dir(o.path)
		if o.kind == opRemove || seenParent[parent] {
			continue
		}
		seenParent[parent] = true
		if refusal, err := plantedlink.Find(r, o.what(), o.path); err != nil || refusal != nil {
			return nil, refused(refusal, err)
		}
		missing, err := r.MissingDirs(parent)
		if err != nil {
			return nil, refusal(o.path, err)
		}
		for _, d := range missing {
			if !seenDir[d] {
				seenDir[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	return dirs, nil
}

func refusal(p string, err error) error {
	var nd *noderoot.NotDirError
	if errors.As(err, &nd) {
		return fmt.Errorf("%s: %w; refusing", p, nd)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// journalDirs makes sure the journal lists exactly the directories Apply is about to create,
// before it creates any. Begin listed them with the priors (no sync of its own: 1,000 files in
// 20 new directories stay one journal write); if the disk changed since, they are listed
// again as they are now.
func (t *Txn) journalDirs() error {
	dirs, err := dirsToCreate(t.a.Root, t.ops)
	if err != nil || slices.Equal(dirs, t.j.CreatedDirs) {
		return err
	}
	j := *t.j
	j.CreatedDirs = dirs
	if err := writeJournal(t.a.Root, &j); err != nil {
		return err
	}
	t.j = &j
	failpoint.Hit()
	return nil
}

// opError names the op and path once: noderoot's own errors carry the path already.
func opError(o op, err error) error {
	if pe, ok := err.(*os.PathError); ok && pe.Path == o.path {
		err = pe.Err
	}
	var nd *noderoot.NotDirError
	if errors.As(err, &nd) {
		return fmt.Errorf("%s: %w; refusing", o, err)
	}
	return fmt.Errorf("%s: %w", o, err)
}
