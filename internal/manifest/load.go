package manifest

import (
	"fmt"
	"os"
	"strings"

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
	for _, f := range files {
		l.loadFile(f)
	}
	return l.set, l.errs.OrNil()
}

// loader carries one Load's state.
type loader struct {
	opts Options
	set  *Set
	errs Errors
}

func (l *loader) loadFile(file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		l.errs = append(l.errs, &Error{File: file, Reason: pathReason(err)})
		return
	}
	kind, _ := kindOf(file)
	var docs []document
	if kind == jsonFile {
		var e *Error
		docs, e = splitJSON(data)
		if e != nil {
			e.File = file
			l.errs = append(l.errs, e)
		}
	} else {
		var e *Error
		docs, e = splitYAML(data)
		if e != nil {
			e.File = file
			l.errs = append(l.errs, e)
		}
	}
	for _, doc := range docs {
		src := Source{File: file, Document: doc.index, doc: doc}
		d, errs := l.decodeDocument(src, kind)
		l.errs = append(l.errs, errs...)
		l.add(d)
	}
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
