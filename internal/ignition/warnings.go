package ignition

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	ign22types "github.com/coreos/ignition/config/v2_2/types"
	v30types "github.com/coreos/ignition/v2/config/v3_0/types"
	v31types "github.com/coreos/ignition/v2/config/v3_1/types"
	v32types "github.com/coreos/ignition/v2/config/v3_2/types"
	v33types "github.com/coreos/ignition/v2/config/v3_3/types"
	v34types "github.com/coreos/ignition/v2/config/v3_4/types"
	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// Warning is a key Ignition accepts but does not apply as written: one no field of the config's
// spec takes, which Ignition (and so OpenShift's render) ignores, or one differing from a
// field's name only in case, which the decoder reads as that field. Both only warn in Ignition,
// so a config carrying them renders; the warning says what became of the key.
type Warning struct {
	// Path is the key's path inside the config, e.g. "storage.files.0.filesystem"; empty for
	// the line saying how many more warnings were left out.
	Path string
	// Key is the key as written.
	Key string
	// Line and Column are 1-based positions of the key in the raw config; 0 when unknown.
	Line, Column int64
	Reason       string
}

func (w Warning) String() string {
	return FieldError{Path: w.Path, Line: w.Line, Column: w.Column, Reason: w.Reason}.Error()
}

// maxWarnings bounds the warnings reported for one config, as maxProblems bounds its errors.
const maxWarnings = maxProblems

// warningList keeps the first maxWarnings warnings and counts the rest.
type warningList struct {
	list []Warning
	more int
}

func (l *warningList) full() bool { return len(l.list) >= maxWarnings }

func (l *warningList) add(w Warning) {
	if l.full() {
		l.more++
		return
	}
	l.list = append(l.list, w)
}

func (l *warningList) result() []Warning {
	if l.more == 0 {
		return l.list
	}
	return append(l.list, Warning{Reason: fmt.Sprintf("and %d more warnings", l.more)})
}

// keyReport is what becomes of a key Ignition said no field takes: a warning, or a problem when
// it and another key of its object set the same field.
type keyReport struct {
	warning *Warning
	problem *FieldError
}

// keyJudge classifies the keys Ignition's libraries warn they do not use. Ignition compares
// keys with field names exactly, but the decoder matches them ignoring case, so a key Ignition
// calls unused may have been read after all ("Path" sets path); only a key matching no field
// is really ignored.
type keyJudge struct {
	raw     []byte
	spec    reflect.Type // the Config type of the spec the config declares
	version string       // that spec, as the messages name it
	tree    any          // raw decoded, once a key needs its siblings
	decoded bool
}

// specTypes are the Config types of the specs whose keys are judged, by major.minor.
var specTypes = map[string]reflect.Type{
	"2.2": reflect.TypeFor[ign22types.Config](),
	"3.0": reflect.TypeFor[v30types.Config](),
	"3.1": reflect.TypeFor[v31types.Config](),
	"3.2": reflect.TypeFor[v32types.Config](),
	"3.3": reflect.TypeFor[v33types.Config](),
	"3.4": reflect.TypeFor[v34types.Config](),
	"3.5": reflect.TypeFor[types.Config](),
}

// newKeyJudge judges keys of raw, a config of spec version ("3.2.0"; "2.x" for spec 2, whose
// 2.0 and 2.1 the 2.2 types describe as far as keys go).
func newKeyJudge(raw []byte, version string) *keyJudge {
	minor := version
	if parts := strings.SplitN(version, ".", 3); len(parts) >= 2 {
		minor = parts[0] + "." + parts[1]
	}
	if minor == "2.x" {
		minor = "2.2"
	}
	return &keyJudge{raw: raw, spec: specTypes[minor], version: version}
}

// judge says what became of key, found in the object at parent (a path of keys and list
// indexes) at line and column.
func (j *keyJudge) judge(parent []string, key string, line, col int64) keyReport {
	path := strings.Join(append(append([]string(nil), parent...), key), ".")
	w := Warning{Path: path, Key: key, Line: line, Column: col}
	fields := jsonFields(structAt(j.spec, parent))
	field, isVariant := "", false
	for name := range fields {
		if strings.EqualFold(name, key) && name != key {
			field, isVariant = name, true
			break
		}
	}
	if !isVariant {
		w.Reason = unknownKeyReason(key, j.version)
		if _, later := jsonFields(structAt(reflect.TypeFor[Config](), parent))[key]; later && j.spec != reflect.TypeFor[Config]() {
			w.Reason = fmt.Sprintf("unknown key %q in spec %s (a later spec has it: declare that ignition.version to use it); ignored, as Ignition and OpenShift ignore it", key, j.version)
		}
		return keyReport{warning: &w}
	}
	var setters []string
	for _, sibling := range j.keysAt(parent) {
		if strings.EqualFold(sibling, field) {
			setters = append(setters, strconv.Quote(sibling))
		}
	}
	if len(setters) > 1 {
		slices.Sort(setters)
		return keyReport{problem: &FieldError{Path: path, Line: line, Column: col, Reason: fmt.Sprintf(
			"keys %s all set %s (the decoder matches keys ignoring case): the last would silently win", strings.Join(setters, ", "), field)}}
	}
	w.Reason = fmt.Sprintf("key %q is read as %q: the decoder matches keys ignoring case and Ignition warns; write %q", key, field, field)
	return keyReport{warning: &w}
}

// keysAt lists the keys of raw's object at path (nil when there is none). raw is decoded once,
// only for a config that has such keys.
func (j *keyJudge) keysAt(path []string) []string {
	if !j.decoded {
		j.decoded = true
		_ = json.Unmarshal(j.raw, &j.tree)
	}
	node := j.tree
	for _, elem := range path {
		switch n := node.(type) {
		case map[string]any:
			node = n[elem]
		case []any:
			i, err := strconv.Atoi(elem)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	obj, _ := node.(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	return keys
}

// structAt is the struct type the object at path decodes into (nil when path leads to none),
// found as the decoder finds fields: by exact name, else ignoring case.
func structAt(t reflect.Type, path []string) reflect.Type {
	for _, elem := range path {
		if t == nil {
			return nil
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			if _, err := strconv.Atoi(elem); err != nil {
				return nil
			}
			t = t.Elem()
		case reflect.Struct:
			fields := jsonFields(t)
			next, ok := fields[elem]
			if !ok {
				for name, ft := range fields {
					if strings.EqualFold(name, elem) {
						next, ok = ft, true
						break
					}
				}
			}
			if !ok {
				return nil
			}
			t = next
		default:
			return nil
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// jsonFields are the keys a struct type takes and their types, fields of embedded structs
// (the Ignition types' Node and FileEmbedded1) included, as encoding/json promotes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	if t == nil {
		return out
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			for name, ft := range jsonFields(f.Type) {
				out[name] = ft
			}
		case !f.IsExported():
		case tag != "":
			out[tag] = f.Type
		default:
			out[f.Name] = f.Type
		}
	}
	return out
}
