//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
)

// problems collects what the offline commands report, one per line, dropping repeats: the same
// bad MachineConfig is found both by its own validation and by every render that selects it.
type problems struct {
	list []error
	seen map[string]bool
}

func (p *problems) add(errs ...error) {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	for _, err := range errs {
		if err == nil || p.seen[err.Error()] {
			continue
		}
		p.seen[err.Error()] = true
		p.list = append(p.list, err)
	}
}

// addLoad adds every problem manifest.Load found.
func (p *problems) addLoad(err error) {
	var errs manifest.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			p.add(e)
		}
		return
	}
	p.add(err)
}

// report prints every problem on stderr and returns the error that makes the process exit 1,
// or nil when there is nothing to report.
func (p *problems) report(cmd *cobra.Command, what string) error {
	if len(p.list) == 0 {
		return nil
	}
	// File order reads best; problems not about a file (render's words about a pool) go last.
	slices.SortStableFunc(p.list, func(a, b error) int {
		return cmpPlace(place(a), place(b))
	})
	for _, err := range p.list {
		fmt.Fprintln(cmd.ErrOrStderr(), err)
	}
	noun := "problems"
	if len(p.list) == 1 {
		noun = "problem"
	}
	return &exitError{code: 1, err: fmt.Errorf("%s: %d %s", what, len(p.list), noun)}
}

// where is a problem's place, for sorting: its file and document, or no file.
type where struct {
	file string
	doc  int
}

func place(err error) where {
	var e *manifest.Error
	if errors.As(err, &e) {
		return where{e.File, e.Document}
	}
	return where{}
}

func cmpPlace(a, b where) int {
	switch {
	case a.file == b.file:
		return a.doc - b.doc
	case a.file == "":
		return 1
	case b.file == "":
		return -1
	}
	return strings.Compare(a.file, b.file)
}

// located turns a render failure into messages about the admin's files: an error about a
// MachineConfig is reported at the file and document it came from, an error about the pool's
// selector at the pool manifest (when the pool came from one), anything else as being about
// the pool.
func located(set *manifest.Set, pool *mcfgv1.MachineConfigPool, err error) []error {
	var list render.Errors
	var one *render.Error
	var noSelector *render.ErrNoSelector
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = render.Errors{one}
	case errors.As(err, &noSelector):
		list = render.Errors{{Field: "spec.machineConfigSelector", Reason: "empty: refusing to select every MachineConfig"}}
	default:
		return []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		if src, ok := set.MachineConfigSource(e.MachineConfig); ok && e.MachineConfig != "" {
			// Ignition's positions (e.Line, e.Column) count in spec.config re-serialised as one-line
			// JSON, which the admin never wrote; the file position FieldError finds replaces them.
			out = append(out, src.FieldError(e.Field, e.Reason))
			continue
		}
		if pool == nil || e.MachineConfig != "" {
			out = append(out, e)
			continue
		}
		if src, ok := set.PoolSource(pool.Name); ok && strings.HasPrefix(e.Field, "spec.machineConfigSelector") {
			out = append(out, src.FieldError(e.Field, e.Reason))
			continue
		}
		// About the pool or the merged result: lead with the pool, which render puts in the reason.
		msg := strings.TrimPrefix(e.Reason, "pool "+pool.Name+": ")
		if e.Field != "" {
			msg = e.Field + ": " + msg
		}
		out = append(out, fmt.Errorf("pool %s: %s", pool.Name, msg))
	}
	return out
}
