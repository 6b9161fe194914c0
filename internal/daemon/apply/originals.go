package apply

import (
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// RecordOriginals records, for every path of set, what the root has there now (a copy, a link,
// or a stamp that nothing was there), unless a record exists. A machine's first boot calls it
// just before Ignition writes the config, so `mco daemon revert` can later return the machine to
// its OS image's state; later transactions find the records and keep them.
func RecordOriginals(r *noderoot.Root, set nodefiles.Set) error {
	p := &planner{root: r}
	for _, e := range set.Entries {
		if err := p.recordOriginal(e.Path); err != nil {
			return err
		}
	}
	t := &Txn{}
	for _, o := range p.ops {
		o.opts.Deferred = false
		if err := t.do(r, o); err != nil {
			return err
		}
	}
	return nil
}
