package ignition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// MaxConfigSize is the largest raw config Parse reads, as given or once YAML became JSON.
// A MachineConfig is stored in etcd, which refuses objects past 1.5 MiB, and a rendered config
// above that cannot be stored either (render.MaxRenderedSize); anything bigger is refused before
// it costs a decode.
const MaxConfigSize = 1_572_864

// maxPathDepth bounds how deep pathAt walks, and so how long a path it names: real configs
// nest about 6 levels, and an error in something nested thousands deep is named by the
// first levels.
const maxPathDepth = 32

func sizeError(n int) error {
	return &ConfigError{Problems: []FieldError{{Reason: fmt.Sprintf("config is %d bytes, over the %d byte limit", n, MaxConfigSize)}}}
}

// yamlToJSON converts a YAML config to JSON strictly: a key given twice, or a second document
// after "---", would otherwise be dropped without a word.
func yamlToJSON(raw []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		// yaml.v2 lists its errors on indented lines.
		return nil, &ConfigError{Problems: []FieldError{{Reason: "neither JSON nor YAML: " + strings.Join(strings.Fields(err.Error()), " ")}}}
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(raw))
	for n := 0; ; n++ {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return js, nil
		}
		if n > 0 && (err != nil || !emptyDocument(&doc)) {
			return nil, &ConfigError{Problems: []FieldError{{Reason: "more than one YAML document: a config is one document"}}}
		}
		if err != nil {
			return js, nil // the conversion above read the first document
		}
	}
}

// emptyDocument is a document holding nothing (a trailing "---", or only comments).
func emptyDocument(doc *yamlv3.Node) bool {
	for _, c := range doc.Content {
		if c.Kind != yamlv3.ScalarNode || c.Tag != "!!null" {
			return false
		}
	}
	return true
}

// duplicateKeys lists the keys raw gives twice in one object: the JSON decoders keep the last
// silently, so whatever the first said would vanish from the config.
func duplicateKeys(raw []byte) []FieldError {
	var v any
	strict, err := sigsjson.UnmarshalStrict(raw, &v)
	if err != nil {
		return nil // a syntax error, which the parse itself reports with its position
	}
	var out problemList
	for _, e := range strict {
		if fe, ok := e.(sigsjson.FieldError); ok {
			if out.full() {
				out.more++
				continue
			}
			out.list = append(out.list, FieldError{Path: dotted(fe.FieldPath()), Reason: "key given more than once (the last would silently win)"})
		}
	}
	return out.result()
}

// dotted turns sigs.k8s.io/json's "storage.files[0].path" into Ignition's "storage.files.0.path".
func dotted(p string) string {
	p = strings.ReplaceAll(p, "[", ".")
	return strings.ReplaceAll(p, "]", "")
}

// offsetOf is the byte offset of a 1-based line and byte column in raw; -1 when unknown.
func offsetOf(raw []byte, line, col int64) int64 {
	if line <= 0 || col <= 0 {
		return -1
	}
	off := int64(0)
	for l := int64(1); l < line; l++ {
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			return -1
		}
		off += int64(i) + 1
	}
	return off + col - 1
}

// pathAt names the innermost JSON value of raw whose text spans byte offset off, as a dotted
// path ("storage.files.0.mode"); "" for the document as a whole. Where raw stops being valid
// JSON, the value being read there is the answer: a syntax error lies inside it.
func pathAt(raw []byte, off int64) string {
	return walkTo(raw, off, false)
}

// pathOfMismatch names the value a decoder's type mismatch is about: encoding/json puts the
// offset right after the value's first token (a whole string or number, or the opening bracket
// of a list or object), which the values inside a list or object do not end at.
func pathOfMismatch(raw []byte, off int64) string {
	return walkTo(raw, off, true)
}

func walkTo(raw []byte, off int64, firstTokenEnd bool) string {
	if off < 0 {
		return ""
	}
	w := &pathWalker{dec: json.NewDecoder(bytes.NewReader(raw)), off: off, firstTokenEnd: firstTokenEnd}
	w.value("", 0)
	return w.path
}

type pathWalker struct {
	dec           *json.Decoder
	off           int64
	firstTokenEnd bool
	path          string
	found         bool
}

// value walks one value at path; it returns true once the answer is known.
func (w *pathWalker) value(path string, depth int) bool {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil || depth > maxPathDepth {
		return w.settle(path)
	}
	if w.firstTokenEnd && w.dec.InputOffset() == w.off {
		return w.settle(path)
	}
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			key, err := w.dec.Token()
			if err != nil {
				return w.settle(path)
			}
			if w.value(join(path, fmt.Sprint(key)), depth+1) {
				return true
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return w.settle(path)
		}
	case json.Delim('['):
		for i := 0; w.dec.More(); i++ {
			if w.value(join(path, strconv.Itoa(i)), depth+1) {
				return true
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return w.settle(path)
		}
	}
	if !w.firstTokenEnd && start <= w.off && w.off <= w.dec.InputOffset() {
		return w.settle(path)
	}
	return false
}

func (w *pathWalker) settle(path string) bool {
	if !w.found {
		w.path, w.found = path, true
	}
	return true
}

func join(path, elem string) string {
	if path == "" {
		return elem
	}
	return path + "." + elem
}

// typeErrorRE matches encoding/json's (and its forks') type mismatch message.
var typeErrorRE = regexp.MustCompile(`cannot unmarshal (.+?) into Go (?:struct field \S+|value) of type (\S+)`)

// typeReason rewrites a decoder's type mismatch ("json: cannot unmarshal string into Go struct
// field File.storage.files.FileEmbedded1.mode of type int") in an admin's words ("got a
// string, want an integer"); ok is false for any other message.
func typeReason(msg string) (reason string, ok bool) {
	m := typeErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	got := m[1]
	switch {
	case got == "string", got == "number", got == "bool":
		got = "a " + strings.Replace(got, "bool", "boolean", 1)
	case got == "array":
		got = "a list"
	case got == "object":
		got = "an object"
	case strings.HasPrefix(got, "number "):
		got = "the number " + strings.TrimPrefix(got, "number ") + ", out of range or not whole"
	}
	return fmt.Sprintf("got %s, want %s", got, typeWord(m[2])), true
}

// typeWord names a Go type of the Ignition structs as a config author thinks of it.
func typeWord(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean (true or false)"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "an object"
}

// unknownKeyReason is the warning for a key Ignition ignores: a spec 2 leftover (networkd, a
// file's filesystem) or a typo, which silently drops that part of the config.
func unknownKeyReason(key, version string) string {
	return fmt.Sprintf("unknown key %q in spec %s: ignored, as Ignition and OpenShift ignore it", key, version)
}
