package ignition

import (
	"reflect"
	"sync"

	"github.com/coreos/ignition/v2/config/util"
	"github.com/coreos/vcontext/path"
	"github.com/coreos/vcontext/report"
)

// fatalInValidation is validate.ValidateWithContext(cfg, nil).IsFatal() at a fraction of the
// cost. The library walks the config twice (once calling every Validate method, once looking for
// duplicate keys), and on every struct it meets re-reads the struct's fields, parses their json
// tags and boxes every value, even a *string, to ask whether it has a Validate method: on a render
// of 200 MachineConfigs with 5,000 files that walk was two thirds of the time. Here the same walk
// is planned once per type (which fields lead to a Validate method or a keyed list, and their
// names), values are reached through pointers so nothing is copied, and the walk stops at the
// first fatal entry: only the fast path calls it, and any fatal entry sends the config to the
// full path, which runs the library and reports every problem with its position.
// TestFatalInValidationMatchesLibrary checks the verdict equals the library's on random configs.
func fatalInValidation(cfg *Config) bool {
	v := reflect.ValueOf(cfg).Elem()
	w := walker{path: make([]any, 0, 8)}
	return w.fatal(planFor(v.Type()), v)
}

// typePlan is what the library's walk does with values of one type.
type typePlan struct {
	kind reflect.Kind
	// validates: the type's own method set has Validate(path.ContextPath) report.Report, which
	// the library calls (on values, never on pointers).
	validates bool
	// unsupported: the library would reach an interface, whose dynamic type is only known at run
	// time; the fast walk declines and the caller takes the full path.
	unsupported bool
	// trivial: nothing under this type is validated or checked for duplicates.
	trivial bool
	fields  []fieldPlan // struct: embedded structs flattened, as the library's GetFields does
	lists   []keyedList // struct: slice fields checked for duplicate keys (ValidateDups)
	elem    *typePlan   // slice and pointer
}

type fieldPlan struct {
	index []int
	name  any // the json name, boxed once: it is the next element of the context path
	plan  *typePlan
}

type keyedList struct {
	index []int
	// list names the set of keys the field's elements must be unique in: the field's own name,
	// or the name MergedKeys gives it (storage's files, directories and links share "Node").
	list      string
	stringKey bool // elements are strings, their own key; otherwise they implement util.Keyed
}

var (
	plans         sync.Map // reflect.Type -> *typePlan
	validatorType = reflect.TypeFor[interface {
		Validate(path.ContextPath) report.Report
	}]()
	keyedType = reflect.TypeFor[util.Keyed]()
)

func planFor(t reflect.Type) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	p := buildPlan(t, map[reflect.Type]*typePlan{})
	plans.Store(t, p)
	return p
}

// buildPlan plans t; building holds the plans under construction, so recursive types end.
func buildPlan(t reflect.Type, building map[reflect.Type]*typePlan) *typePlan {
	if p, ok := building[t]; ok {
		return p
	}
	p := &typePlan{kind: t.Kind(), validates: t.Kind() != reflect.Pointer && t.Implements(validatorType)}
	building[t] = p
	switch t.Kind() {
	case reflect.Interface:
		p.unsupported = true
	case reflect.Pointer, reflect.Slice:
		p.elem = buildPlan(t.Elem(), building)
		p.unsupported = p.elem.unsupported
	case reflect.Struct:
		planStruct(p, t, building)
	}
	p.trivial = !p.validates && !p.unsupported && len(p.lists) == 0 && len(p.fields) == 0 && (p.elem == nil || p.elem.trivial)
	return p
}

func planStruct(p *typePlan, t reflect.Type, building map[reflect.Type]*typePlan) {
	// The library asks the value for these; every implementation returns a constant map.
	zero := reflect.Zero(t).Interface()
	ignored := map[string]struct{}{}
	if i, ok := zero.(util.IgnoresDups); ok {
		ignored = i.IgnoreDuplicates()
	}
	merged := map[string]string{}
	if m, ok := zero.(util.MergesKeys); ok {
		merged = m.MergedKeys()
	}
	for _, f := range flatFields(t, nil) {
		fp := buildPlan(f.Type, building)
		if fp.unsupported {
			p.unsupported = true
		}
		if !fp.trivial {
			p.fields = append(p.fields, fieldPlan{index: f.Index, name: jsonName(f), plan: fp})
		}
		if f.Type.Kind() != reflect.Slice {
			continue
		}
		if _, skip := ignored[f.Name]; skip {
			continue
		}
		list := f.Name
		if m, ok := merged[f.Name]; ok {
			list = m
		}
		elem := f.Type.Elem()
		stringKey := elem.Kind() == reflect.String
		if !stringKey && !elem.Implements(keyedType) {
			// The library would panic on the first element; let it.
			p.unsupported = true
		}
		p.lists = append(p.lists, keyedList{index: f.Index, list: list, stringKey: stringKey})
	}
}

// flatFields lists t's fields as the library's GetFields does: an embedded field is replaced by
// its own fields. index is the path of indices from the outermost struct.
func flatFields(t reflect.Type, prefix []int) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		f.Index = append(append([]int(nil), prefix...), i)
		if !f.Anonymous {
			out = append(out, f)
			continue
		}
		if f.Type.Kind() != reflect.Struct {
			// GetFields would look at the embedded value's dynamic type; none of Ignition's
			// types embeds anything but structs.
			f.Type = reflect.TypeFor[any]()
			out = append(out, f)
			continue
		}
		out = append(out, flatFields(f.Type, f.Index)...)
	}
	return out
}

// jsonName is the library's FieldName for the "json" tag: the tag up to its first comma.
func jsonName(f reflect.StructField) any {
	tag := f.Tag.Get("json")
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

// walker carries the context path the library would pass to each Validate method; the methods
// only append to it for their reports, which are looked at for fatal entries and dropped.
type walker struct {
	path []any
}

func (w *walker) ctx() path.ContextPath {
	return path.ContextPath{Path: w.path[:len(w.path):len(w.path)], Tag: "json"}
}

// fatal walks v (addressable) as the library's validate does.
func (w *walker) fatal(p *typePlan, v reflect.Value) bool {
	if p.unsupported {
		return true
	}
	if p.trivial {
		return false
	}
	if p.validates && v.Addr().Interface().(interface {
		Validate(path.ContextPath) report.Report
	}).Validate(w.ctx()).IsFatal() {
		return true
	}
	switch p.kind {
	case reflect.Struct:
		if len(p.lists) > 0 && duplicated(p.lists, v) {
			return true
		}
		for _, f := range p.fields {
			w.path = append(w.path, f.name)
			bad := w.fatal(f.plan, v.FieldByIndex(f.index))
			w.path = w.path[:len(w.path)-1]
			if bad {
				return true
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			w.path = append(w.path, i)
			bad := w.fatal(p.elem, v.Index(i))
			w.path = w.path[:len(w.path)-1]
			if bad {
				return true
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return w.fatal(p.elem, v.Elem())
		}
	}
	return false
}

// duplicated is the library's ValidateDups on one struct: a key repeated within a list, or
// across the lists sharing a name, is an error.
func duplicated(lists []keyedList, v reflect.Value) bool {
	var seen map[string]map[string]struct{}
	for _, l := range lists {
		s := v.FieldByIndex(l.index)
		n := s.Len()
		if n == 0 {
			continue
		}
		if seen == nil {
			seen = map[string]map[string]struct{}{}
		}
		keys := seen[l.list]
		if keys == nil {
			keys = make(map[string]struct{}, n)
			seen[l.list] = keys
		}
		for i := range n {
			e := s.Index(i)
			var key string
			if l.stringKey {
				key = e.String()
			} else {
				key = e.Addr().Interface().(util.Keyed).Key()
			}
			if _, dup := keys[key]; dup {
				return true
			}
			keys[key] = struct{}{}
		}
	}
	return false
}
