package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"

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
	return yamlv2.Marshal(yamlNumbers(v))
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
