package kubeletconfig

import (
	"encoding/json"
	"reflect"
	"strings"
)

// How encoding/json sees KubeletConfiguration's fields: the drop-in, Satisfies and
// FlagsOverriding all name fields by their JSON paths.

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// jsonField is one field of a struct type as encoding/json sees it.
type jsonField struct {
	Type  reflect.Type
	Index []int // for reflect.Value.FieldByIndex
}

// jsonFields maps the JSON names of t's fields (inline embedded structs' included) to them.
func jsonFields(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "" && f.Anonymous && (strings.Contains(opts, "inline") || f.Type.Kind() == reflect.Struct):
			for n, inner := range jsonFields(f.Type) {
				out[n] = jsonField{inner.Type, append([]int{i}, inner.Index...)}
			}
		case name == "":
			out[f.Name] = jsonField{f.Type, []int{i}}
		default:
			out[name] = jsonField{f.Type, []int{i}}
		}
	}
	return out
}

// fieldFor finds key's field as encoding/json does: the exact name, else one equal under
// case folding.
func fieldFor(fields map[string]jsonField, key string) (string, jsonField, bool) {
	if f, ok := fields[key]; ok {
		return key, f, true
	}
	for name, f := range fields {
		if strings.EqualFold(name, key) {
			return name, f, true
		}
	}
	return "", jsonField{}, false
}
