package kubeletfiles

import (
	"encoding/json"
	"reflect"
	"strings"
)

// How encoding/json sees KubeletConfiguration's fields: the generator's drop-in, Satisfies and
// FlagsOverriding all name fields by their JSON paths.

// JSONUnmarshaler is the interface a type decoding itself implements.
var JSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// JSONField is one field of a struct type as encoding/json sees it.
type JSONField struct {
	Type  reflect.Type
	Index []int // for reflect.Value.FieldByIndex
}

// JSONFields maps the JSON names of t's fields (inline embedded structs' included) to them.
func JSONFields(t reflect.Type) map[string]JSONField {
	out := map[string]JSONField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "" && f.Anonymous && (strings.Contains(opts, "inline") || f.Type.Kind() == reflect.Struct):
			for n, inner := range JSONFields(f.Type) {
				out[n] = JSONField{inner.Type, append([]int{i}, inner.Index...)}
			}
		case name == "":
			out[f.Name] = JSONField{f.Type, []int{i}}
		default:
			out[name] = JSONField{f.Type, []int{i}}
		}
	}
	return out
}

// FieldFor finds key's field as encoding/json does: the exact name, else one equal under
// case folding.
func FieldFor(fields map[string]JSONField, key string) (string, JSONField, bool) {
	if f, ok := fields[key]; ok {
		return key, f, true
	}
	for name, f := range fields {
		if strings.EqualFold(name, key) {
			return name, f, true
		}
	}
	return "", JSONField{}, false
}
