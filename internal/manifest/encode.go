package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
)

// YAML encodes obj as sigs.k8s.io/yaml.Marshal does (and so kubectl -o yaml: its JSON form,
// keys sorted, the same scalars), byte for byte, in about half the time for a large rendered
// config. sigs.k8s.io/yaml reads the JSON back with the YAML parser; on a pool of 4,000 files
// that read was a third of `mco render`'s whole run. Here encoding/json reads it, numbers
// become what the YAML parser makes of them (integers when they are, floats otherwise), and the
// same yaml.v2 encoder writes it.
func YAML(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return JSONToYAML(j)
}

// JSONToYAML is sigs.k8s.io/yaml.JSONToYAML's output for one JSON document, faster (see YAML).
func JSONToYAML(j []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	v = yamlNumbers(v)
	if out, ok, err := marshalSplit(v); ok || err != nil {
		return out, err
	}
	return yamlv2.Marshal(v)
}

// yamlNumbers replaces every json.Number in v, in place, by the value the YAML parser reads the
// same text as: an int when it is one (a uint64 past int64's range), a float64 otherwise.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = yamlNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u // as the YAML parser reads an integer past int64
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	}
	return v
}

// splitMinItems is the shortest list marshalSplit encodes in parts: below it, starting the
// goroutines costs more than it saves.
const splitMinItems = 256

// marshalSplit encodes v as yamlv2.Marshal does, the longest list of mappings in it (a rendered
// config's storage.files: most of the document) in parts on every processor, and says whether
// it did. The encoder writes the same lines for a list whatever its depth, shifted by its
// indentation, but for one thing: it folds a long scalar at a space once past column 80, and
// the column depends on the depth. So a list holding any string with a space is left to the
// one-pass encoder (ok false), and every part is shifted by the indentation the list's key has
// in the rest of the document.
func marshalSplit(v any) (out []byte, ok bool, err error) {
	workers := runtime.GOMAXPROCS(0)
	parent, key, list := longestList(v)
	if workers < 2 || len(list) < splitMinItems || !spaceless(list) {
		return nil, false, nil
	}
	// The list's place in the rest of the document; should the document hold the placeholder
	// elsewhere too, the count below finds it and the one-pass encoder writes it all.
	const placeholder = "mco-split-list-placeholder"
	parent[key] = placeholder
	defer func() { parent[key] = list }()
	rest, err := yamlv2.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	parts := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(list)/workers, (w+1)*len(list)/workers
		wg.Go(func() { parts[w], errs[w] = yamlv2.Marshal(list[lo:hi]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	// The key's line: "<indent><key>: <placeholder>".
	at := bytes.Index(rest, []byte(": "+placeholder+"\n"))
	if at < 0 || bytes.Count(rest, []byte(placeholder)) != 1 {
		return nil, false, nil
	}
	// The key's column: past the line's indentation and, for a mapping's first key in a list
	// item, its "- " markers.
	line := rest[bytes.LastIndexByte(rest[:at], '\n')+1 : at]
	keyAt := line
	for {
		trimmed := bytes.TrimPrefix(bytes.TrimLeft(keyAt, " "), []byte("- "))
		if len(trimmed) == len(keyAt) {
			break
		}
		keyAt = trimmed
	}
	indent := bytes.Repeat([]byte(" "), len(line)-len(keyAt))
	var buf bytes.Buffer
	buf.Grow(len(rest) + len(list)*64)
	buf.Write(rest[:at])
	buf.WriteString(":\n")
	for _, p := range parts {
		for line := range bytes.Lines(p) {
			buf.Write(indent)
			buf.Write(line)
		}
	}
	buf.Write(rest[at+len(": "+placeholder+"\n"):])
	return buf.Bytes(), true, nil
}

// longestList finds the longest list of mappings held by a mapping in v, and that mapping and
// key.
func longestList(v any) (parent map[string]any, key string, list []any) {
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if l, ok := e.([]any); ok && len(l) > len(list) && allMaps(l) {
					parent, key, list = x, k, l
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return parent, key, list
}

func allMaps(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// spaceless says whether no string in v, key or value, holds a space or a tab.
func spaceless(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.ContainsAny(k, " \t") || !spaceless(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !spaceless(e) {
				return false
			}
		}
	case string:
		return !strings.ContainsAny(x, " \t")
	}
	return true
}
