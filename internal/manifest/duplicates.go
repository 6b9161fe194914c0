package manifest

import (
	"strconv"

	yamlv3 "go.yaml.in/yaml/v3"
)

// duplicateKey is a key a YAML mapping gives twice, with its field path in the document.
type duplicateKey struct {
	key, field   string
	line, column int // 1-based, in the document
}

// duplicateKeys finds every key given twice in one mapping of doc. The strict YAML→JSON
// conversion refuses them but names only the key and a line; the path tells which "name" of
// a manifest it is. Aliases are not followed: a merged mapping is checked where it is written.
func duplicateKeys(doc []byte) []duplicateKey {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil
	}
	var out []duplicateKey
	var walk func(n *yamlv3.Node, path string, depth int)
	walk = func(n *yamlv3.Node, path string, depth int) {
		if depth > maxWalkDepth {
			return
		}
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				walk(c, path, depth+1)
			}
		case yamlv3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i]
				field := joinField(path, key.Value)
				if seen[key.Value] {
					out = append(out, duplicateKey{key: key.Value, field: field, line: key.Line, column: key.Column})
				}
				seen[key.Value] = true
				walk(n.Content[i+1], field, depth+1)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, joinField(path, strconv.Itoa(i)), depth+1)
			}
		}
	}
	walk(&root, "", 0)
	return out
}

// maxWalkDepth bounds the walk; the YAML parser already refuses documents nested past 10000.
const maxWalkDepth = 10_000

func joinField(path, elem string) string {
	if path == "" {
		return elem
	}
	return path + "." + elem
}
