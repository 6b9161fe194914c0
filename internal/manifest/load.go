package manifest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// Options tune how documents become objects.
type Options struct {
	// FCOSRole is the machineconfiguration.openshift.io/role label given to MachineConfigs made
	// from fcos Butane configs; empty leaves them unlabelled (so no pool selects them).
	FCOSRole string
}

// Set is everything loaded, in file and document order.
type Set struct {
	MachineConfigs []*mcfgv1.MachineConfig
	Pools          []*mcfgv1.MachineConfigPool

	mcSources   map[string]Source
	poolSources map[string]Source
}

// MachineConfigSource says where the named MachineConfig was loaded from.
func (s *Set) MachineConfigSource(name string) (Source, bool) {
	src, ok := s.mcSources[name]
	return src, ok
}

// PoolSource says where the named pool was loaded from.
func (s *Set) PoolSource(name string) (Source, bool) {
	src, ok := s.poolSources[name]
	return src, ok
}

// Pool returns the named pool, or nil if no manifest defines it.
func (s *Set) Pool(name string) *mcfgv1.MachineConfigPool {
	for _, p := range s.Pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Load reads every manifest under paths (see the package comment for the rules). It keeps going
// past bad documents, so the returned Set holds whatever loaded and the error, an Errors, lists
// every problem.
func Load(opts Options, paths ...string) (*Set, error) {
	l := &loader{opts: opts, set: &Set{mcSources: map[string]Source{}, poolSources: map[string]Source{}}}
	files, errs := expand(paths)
	l.errs = errs
	if len(files) == 0 && len(errs) == 0 {
		l.errs = append(l.errs, &Error{File: strings.Join(paths, " "), Reason: "no manifest files found (want .yaml, .yml, .json or .bu)"})
	}
	// Reading and decoding a file is independent of every other (most of a large render's
	// time); what they hold is added in the files' order, so errors and duplicates come out
	// as from one file after the other.
	read := make([]fileContents, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := range next {
				read[i] = l.readFile(files[i])
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, fc := range read {
		l.errs = append(l.errs, fc.errs...)
		for _, doc := range fc.docs {
			l.errs = append(l.errs, doc.errs...)
			l.add(doc.decoded)
		}
	}
	return l.set, l.errs.OrNil()
}

// fileContents is one file read and decoded: the errors of reading and splitting it, then
// each document's objects and errors.
type fileContents struct {
	errs Errors
	docs []decodedDocument
}

type decodedDocument struct {
	decoded decoded
	errs    Errors
}

// loader carries one Load's state.
type loader struct {
	opts Options
	set  *Set
	errs Errors
}

// readFile reads and decodes file; it only reads l.opts, so files are read in parallel.
func (l *loader) readFile(file string) fileContents {
	var out fileContents
	data, err := os.ReadFile(file)
	if err != nil {
		out.errs = append(out.errs, &Error{File: file, Reason: pathReason(err)})
		return out
	}
	kind, _ := kindOf(file)
	var docs []document
	var e *Error
	if kind == jsonFile {
		docs, e = splitJSON(data)
	} else {
		docs, e = splitYAML(data)
	}
	if e != nil {
		e.File = file
		out.errs = append(out.errs, e)
	}
	for _, doc := range docs {
		src := Source{File: file, Document: doc.index, doc: doc}
		d, errs := l.decodeDocument(src, kind)
		out.docs = append(out.docs, decodedDocument{decoded: d, errs: errs})
	}
	return out
}

// add records decoded objects, refusing a second object of the same kind and name: which one
// wins would depend on file order, and the admin surely meant only one.
func (l *loader) add(d decoded) {
	for i, mc := range d.mcs {
		src := d.mcSources[i]
		if first, dup := l.set.mcSources[mc.Name]; dup {
			l.errs = append(l.errs, src.FieldError("metadata.name", fmt.Sprintf("MachineConfig %q is also defined at %s", mc.Name, first)))
			continue
		}
		l.set.mcSources[mc.Name] = src
		l.set.MachineConfigs = append(l.set.MachineConfigs, mc)
	}
	for i, pool := range d.pools {
		src := d.poolSources[i]
		if first, dup := l.set.poolSources[pool.Name]; dup {
			l.errs = append(l.errs, src.FieldError("metadata.name", fmt.Sprintf("MachineConfigPool %q is also defined at %s", pool.Name, first)))
			continue
		}
		l.set.poolSources[pool.Name] = src
		l.set.Pools = append(l.set.Pools, pool)
	}
}
