package manifest

import (
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// locate finds the 1-based line and column of a field path ("spec.config.storage.files.0.mode",
// or apimachinery's "spec.x[0].y") inside one YAML or JSON document. When the full path does not
// exist (an index the decoder left out, a field that is missing) it returns the deepest part that
// does, which is still where the admin has to look. ok is false if the document does not parse.
func locate(doc []byte, field string) (line, col int, ok bool) {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 {
		return 0, 0, false
	}
	node := root.Content[0]
	line, col = node.Line, node.Column
	parts := splitField(field)
	for len(parts) > 0 {
		next, at, used := child(node, parts)
		if next == nil {
			break
		}
		line, col = at.Line, at.Column
		node, parts = next, parts[used:]
	}
	return line, col, true
}

// child steps one level down from node. Map keys may themselves contain dots (label keys such
// as machineconfiguration.openshift.io/role), so the longest run of parts naming a key wins.
// It returns the child, the node to point at (the key, for a map entry) and how many parts it used.
func child(node *yamlv3.Node, parts []string) (next, at *yamlv3.Node, used int) {
	for node.Kind == yamlv3.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	switch node.Kind {
	case yamlv3.MappingNode:
		for n := len(parts); n >= 1; n-- {
			key := strings.Join(parts[:n], ".")
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Value == key {
					return node.Content[i+1], node.Content[i], n
				}
			}
		}
	case yamlv3.SequenceNode:
		i, err := strconv.Atoi(parts[0])
		if err == nil && i >= 0 && i < len(node.Content) {
			return node.Content[i], node.Content[i], 1
		}
	}
	return nil, nil, 0
}

// splitField turns "a.b[0].c" and "a.b.0.c" alike into [a b 0 c].
func splitField(field string) []string {
	field = strings.NewReplacer("[", ".", "]", "").Replace(field)
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}
