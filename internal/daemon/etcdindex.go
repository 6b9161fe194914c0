package daemon

import (
	"fmt"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/etcdindex"
)

// readEtcdIndex is the index the server templated this machine's first config with (seed 003,
// etcdindex.IndexPath), nil on machines that booted without one. Every config the agent loads
// is templated with it, or the first check would find the first boot's templated files
// drifted from their templates, and a later update would write the templates themselves.
func readEtcdIndex(root *noderoot.Root) (*int, error) {
	info, err := root.Lstat(etcdindex.IndexPath)
	if err != nil || info.Type == noderoot.Missing {
		return nil, err
	}
	data, err := root.ReadFile(etcdindex.IndexPath)
	if err != nil {
		return nil, err
	}
	index, err := etcdindex.ParseIndex(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", etcdindex.IndexPath, err)
	}
	return &index, nil
}

// etcdIndex is readEtcdIndex, read once per process: only the first boot writes the file.
func (a *Agent) etcdIndex() (*int, error) {
	if !a.s.etcdIndexRead {
		index, err := readEtcdIndex(a.root)
		if err != nil {
			return nil, err
		}
		a.s.etcdIndex, a.s.etcdIndexRead = index, true
	}
	return a.s.etcdIndex, nil
}
