package problems

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/manifest"
)

// List collects what the offline commands report, dropping repeats: the same bad MachineConfig
// is found both by its own validation and by every render that selects it.
type List struct {
	list []error
	seen map[string]bool
}

// Add adds errs, nil ones and repeats left out.
func (p *List) Add(errs ...error) {
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

// AddLoad adds every problem manifest.Load found.
func (p *List) AddLoad(err error) {
	var errs manifest.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			p.Add(e)
		}
		return
	}
	p.Add(err)
}

// Report writes every problem on w, one per line, and returns the error the command ends with
// ("WHAT: N problems"), or nil when there is nothing to report.
func (p *List) Report(w io.Writer, what string) error {
	if len(p.list) == 0 {
		return nil
	}
	// File order reads best; problems not about a file (render's words about a pool) go last.
	slices.SortStableFunc(p.list, func(a, b error) int {
		return cmpPlace(place(a), place(b))
	})
	for _, err := range p.list {
		fmt.Fprintln(w, err)
	}
	noun := "problems"
	if len(p.list) == 1 {
		noun = "problem"
	}
	return fmt.Errorf("%s: %d %s", what, len(p.list), noun)
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
