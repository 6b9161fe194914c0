package apply

import (
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/plantedlink"
)

// refused is a planted-link refusal of the whole transaction, or the error finding out.
func refused(refusal *plantedlink.Refusal, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w; refusing", refusal)
}

// skipPlantedLinks drops the removals planned through a link planted on the host in the
// path's parents (writes through one are refused by dirsToCreate). What is behind such a link
// was never the node's to keep: the link was planted after the config wrote there, or leads
// where the agent never writes; unlinking it would be a write through the link.
func (p *planner) skipPlantedLinks() error {
	kept := p.ops[:0]
	for _, o := range p.ops {
		if o.kind == opRemove {
			if planted, err := behindPlantedLink(p.root, o.path); err != nil {
				return err
			} else if planted {
				continue
			}
		}
		kept = append(kept, o)
	}
	p.ops = kept
	return nil
}

// what names the kind of path an op writes, as a refusal names it.
func (o op) what() string {
	if o.kind == opSymlink {
		return "link"
	}
	return "file"
}

// behindPlantedLink tells a rollback to leave a path alone: its parents on the host lead
// where the agent never writes, so nothing of the transaction's can be there to undo.
func behindPlantedLink(r *noderoot.Root, p string) (bool, error) {
	refusal, err := plantedlink.Find(r, "path", p)
	return refusal != nil, err
}
