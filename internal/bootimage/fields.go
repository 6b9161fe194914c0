package bootimage

import (
	"encoding/json"
	"fmt"
)

// ProviderSpecField is where a MachineSet keeps the providerSpec this package edits; errors
// about its fields name them from the MachineSet's root, as kubectl shows them.
const ProviderSpecField = "spec.template.spec.providerSpec.value"

// FieldError is a malformed field: a value of the wrong type, or a field the platform cannot
// do without. Unlike a Skip, it is the MachineSet's (or stream's) fault, and it stays degraded
// until someone fixes it.
type FieldError struct {
	// Field is the full path, e.g. "spec.template.spec.providerSpec.value.ami.id".
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// doc is a decoded JSON object and where it sits in the MachineSet, so every read of a field
// checks its type and every edit lands in the document that will be encoded.
type doc struct {
	m    map[string]any
	path string
}

func (d doc) field(key string) string { return d.path + "." + key }

// wrongType reports key holding something other than what the platform reads there.
func (d doc) wrongType(key, want string) error {
	return &FieldError{Field: d.field(key), Reason: fmt.Sprintf("got %s, want %s", jsonType(d.m[key]), want)}
}

func (d doc) missing(key, why string) error {
	return &FieldError{Field: d.field(key), Reason: "missing: " + why}
}

// object returns the object at key; ok is false when the key is absent or null.
func (d doc) object(key string) (sub doc, ok bool, err error) {
	switch v := d.m[key].(type) {
	case nil:
		return doc{}, false, nil
	case map[string]any:
		return doc{m: v, path: d.field(key)}, true, nil
	}
	return doc{}, false, d.wrongType(key, "an object")
}

// str returns the string at key, "" when absent or null.
func (d doc) str(key string) (string, error) {
	switch v := d.m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", d.wrongType(key, "a string")
}

// boolean returns the boolean at key, false when absent or null.
func (d doc) boolean(key string) (bool, error) {
	switch v := d.m[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, d.wrongType(key, "a boolean (true or false)")
}

// list returns the list at key, nil when absent or null.
func (d doc) list(key string) ([]any, error) {
	switch v := d.m[key].(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	}
	return nil, d.wrongType(key, "a list")
}

// item returns element i of the list at key as an object.
func (d doc) item(key string, list []any, i int) (doc, error) {
	path := fmt.Sprintf("%s.%d", d.field(key), i)
	if m, ok := list[i].(map[string]any); ok {
		return doc{m: m, path: path}, nil
	}
	return doc{}, &FieldError{Field: path, Reason: fmt.Sprintf("got %s, want an object", jsonType(list[i]))}
}

// strAt follows keys through nested objects to a string; "" when any step is absent.
func (d doc) strAt(keys ...string) (string, error) {
	for _, k := range keys[:len(keys)-1] {
		sub, ok, err := d.object(k)
		if err != nil || !ok {
			return "", err
		}
		d = sub
	}
	return d.str(keys[len(keys)-1])
}

// jsonType names the JSON type of a decoded value (numbers decode as json.Number).
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
