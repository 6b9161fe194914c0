package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Source is where a loaded object came from, so problems found later (by validation or
// rendering) can be reported against the admin's file rather than the object.
type Source struct {
	File     string
	Document int
	// Prefix is the object's field path inside its document: "items.2." for the third item of
	// a List, empty for a document that is the object.
	Prefix string
	// FromButane marks objects translated from a Butane config: their field paths name the
	// generated MachineConfig, not lines of the file, so they cannot be located.
	FromButane bool

	doc document
}

// String is "file:document", the prefix of every message about the object.
func (s Source) String() string {
	return fmt.Sprintf("%s:%d", s.File, s.Document)
}

// FieldError reports reason about field, a path inside the object such as
// "spec.config.storage.files.0.mode", with the line and column in the file when they can be found.
func (s Source) FieldError(field, reason string) *Error {
	e := &Error{File: s.File, Document: s.Document, Field: s.Prefix + field, Reason: reason}
	if s.FromButane {
		if field != "" {
			e.Field = field
			e.Reason += " (in the MachineConfig translated from Butane)"
		}
		return e
	}
	if line, col, ok := locate(s.doc.data, e.Field); ok {
		e.Line, e.Column = s.doc.firstLine+line-1, col
	}
	return e
}

// JSON is the object as its file wrote it, as JSON (a List item alone), for callers that must
// tell a field the admin left out from one set to its zero value, as `kubectl apply` does.
// False for objects translated from Butane, which no file holds.
func (s Source) JSON() ([]byte, bool) {
	if s.FromButane {
		return nil, false
	}
	js, err := yaml.YAMLToJSON(s.doc.data)
	if err != nil {
		return nil, false
	}
	for _, part := range strings.Split(strings.TrimSuffix(s.Prefix, "."), ".") {
		if part == "" || part == "items" {
			continue
		}
		i, err := strconv.Atoi(part)
		if err != nil {
			return nil, false
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(js, &list) != nil || i >= len(list.Items) {
			return nil, false
		}
		js = list.Items[i]
	}
	return js, true
}
