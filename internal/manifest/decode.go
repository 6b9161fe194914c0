package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Kinds this package reads.
const (
	kindMachineConfig     = "MachineConfig"
	kindMachineConfigPool = "MachineConfigPool"
)

var apiVersion = mcfgv1.GroupVersion.String()

// decoded is what one document held.
type decoded struct {
	mcs   []*mcfgv1.MachineConfig
	pools []*mcfgv1.MachineConfigPool
	// sources are parallel to mcs and pools, in that order.
	mcSources, poolSources []Source
}

// header is the part of a document that says what it is.
type header struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Variant    *string `json:"variant"`
}

// decodeDocument turns one document into objects. YAML goes through the strict YAML→JSON
// conversion first (duplicate keys are errors), then strict typed JSON decoding.
func (l *loader) decodeDocument(src Source, kind fileKind) (decoded, Errors) {
	js, err := yaml.YAMLToJSONStrict(src.doc.data)
	if err != nil {
		if dups := duplicateKeys(src.doc.data); len(dups) > 0 {
			errs := make(Errors, len(dups))
			for i, d := range dups {
				errs[i] = &Error{File: src.File, Document: src.Document, Field: src.Prefix + d.field,
					Line: src.doc.firstLine + d.line - 1, Column: d.column,
					Reason: fmt.Sprintf("invalid YAML: key %q is given more than once", d.key)}
			}
			return decoded{}, errs
		}
		e := &Error{File: src.File, Document: src.Document, Reason: "invalid YAML: " + err.Error()}
		return decoded{}, Errors{withYAMLLine(e, src.doc)}
	}
	js = bytes.TrimSpace(js)
	if string(js) == "null" {
		return decoded{}, nil // a comment-only document
	}
	var h header
	if js[0] != '{' || json.Unmarshal(js, &h) != nil {
		return decoded{}, Errors{src.FieldError("", "not an object (want a MachineConfig, a MachineConfigPool or a Butane config)")}
	}
	if h.Variant != nil {
		return l.decodeButane(src, *h.Variant)
	}
	if kind == butaneFile {
		return decoded{}, Errors{src.FieldError("variant", "missing: a .bu file holds Butane configs (variant fcos or openshift)")}
	}
	return decodeObject(src, js, h)
}

// decodeObject decodes one API object (a document or a List item) by its kind.
func decodeObject(src Source, js []byte, h header) (decoded, Errors) {
	var out decoded
	switch h.Kind {
	case kindMachineConfig:
		mc := &mcfgv1.MachineConfig{}
		if errs := decodeTyped(src, js, h, mc, &mc.ObjectMeta); len(errs) > 0 {
			return out, errs
		}
		out.mcs, out.mcSources = append(out.mcs, mc), append(out.mcSources, src)
	case kindMachineConfigPool:
		pool := &mcfgv1.MachineConfigPool{}
		if errs := decodeTyped(src, js, h, pool, &pool.ObjectMeta); len(errs) > 0 {
			return out, errs
		}
		out.pools, out.poolSources = append(out.pools, pool), append(out.poolSources, src)
	case "List", "MachineConfigList", "MachineConfigPoolList":
		return decodeList(src, js)
	case "":
		return out, Errors{src.FieldError("kind", "missing (want MachineConfig or MachineConfigPool)")}
	default:
		return out, Errors{src.FieldError("kind", fmt.Sprintf("%s is not supported (want MachineConfig, MachineConfigPool or a List of them)", h.Kind))}
	}
	return out, nil
}

// decodeList reads what `kubectl get -o yaml` writes: a List whose items are objects.
func decodeList(src Source, js []byte) (decoded, Errors) {
	var list struct {
		metav1.TypeMeta `json:",inline"`
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []json.RawMessage `json:"items"`
	}
	if errs := strictUnmarshal(src, js, &list); len(errs) > 0 {
		return decoded{}, errs
	}
	var out decoded
	var errs Errors
	for i, item := range list.Items {
		itemSrc := src
		itemSrc.Prefix = fmt.Sprintf("%sitems.%d.", src.Prefix, i)
		var h header
		if json.Unmarshal(item, &h) != nil {
			errs = append(errs, itemSrc.FieldError("", "not an object"))
			continue
		}
		d, itemErrs := decodeObject(itemSrc, item, h)
		errs = append(errs, itemErrs...)
		out.mcs, out.mcSources = append(out.mcs, d.mcs...), append(out.mcSources, d.mcSources...)
		out.pools, out.poolSources = append(out.pools, d.pools...), append(out.poolSources, d.poolSources...)
	}
	return out, errs
}

// decodeTyped strictly decodes a MachineConfig or pool and checks what the API server would
// refuse before anything else looks at it: the wrong group version and a missing or bad name.
func decodeTyped(src Source, js []byte, h header, into any, meta *metav1.ObjectMeta) Errors {
	if errs := strictUnmarshal(src, js, into); len(errs) > 0 {
		return errs
	}
	var errs Errors
	if h.APIVersion != apiVersion {
		errs = append(errs, src.FieldError("apiVersion", fmt.Sprintf("%q is not supported for %s (want %s)", h.APIVersion, h.Kind, apiVersion)))
	}
	if reason := nameProblem(meta.Name); reason != "" {
		errs = append(errs, src.FieldError("metadata.name", reason))
	}
	return errs
}

// nameProblem says what is wrong with an object name, or "" if nothing.
func nameProblem(name string) string {
	if name == "" {
		return "required"
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Sprintf("%q is not a valid name: %s", name, strings.Join(msgs, "; "))
	}
	return ""
}

// strictUnmarshal decodes with sigs.k8s.io/json, the decoder the API server uses, so unknown and
// duplicate fields come back with their full path. A type mismatch stops that decoder without a
// path it exposes; encoding/json names the field, so it is asked to describe it.
func strictUnmarshal(src Source, js []byte, into any) Errors {
	strictErrs, err := sigsjson.UnmarshalStrict(js, into)
	if err != nil {
		var te *json.UnmarshalTypeError
		fresh := reflect.New(reflect.TypeOf(into).Elem()).Interface()
		if errors.As(json.Unmarshal(js, fresh), &te) {
			return Errors{src.FieldError(te.Field, fmt.Sprintf("got a %s, want %s", te.Value, typeWord(te.Type)))}
		}
		return Errors{src.FieldError("", err.Error())}
	}
	var errs Errors
	for _, se := range strictErrs {
		field, reason := "", se.Error()
		if fe, ok := se.(sigsjson.FieldError); ok {
			field = fe.FieldPath()
			// The message repeats the path in quotes: `unknown field "spec.foo"`.
			reason, _, _ = strings.Cut(reason, ` "`)
		}
		errs = append(errs, src.FieldError(field, reason))
	}
	return errs
}

// typeWord names a Go type the way a manifest author thinks of it.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return typeWord(t.Elem())
	}
	return t.String()
}
