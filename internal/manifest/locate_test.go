package manifest

import "testing"

func TestLocate(t *testing.T) {
	doc := []byte(`metadata:
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config: {"storage": {"files": [{"path": "/a"}, {"path": "/b", "mode": 2541}]}}
  kernelArguments:
    - nosmt
`)
	tests := []struct {
		field     string
		line, col int
	}{
		{"metadata.labels.machineconfiguration.openshift.io/role", 3, 5}, // a key with dots
		{"spec.config.storage.files.1.mode", 5, 65},                      // inside inline JSON
		{"spec.kernelArguments[0]", 7, 7},                                // apimachinery's index form
		{"spec.kernelArguments.0", 7, 7},                                 // render's index form
		{"spec.kernelArguments.5", 6, 3},                                 // missing index: deepest found
		{"spec.fips", 4, 1},                                              // missing field: its parent
		{"", 1, 1},
	}
	for _, tt := range tests {
		line, col, ok := locate(doc, tt.field)
		if !ok || line != tt.line || col != tt.col {
			t.Errorf("locate(%q) = %d:%d %v, want %d:%d", tt.field, line, col, ok, tt.line, tt.col)
		}
	}
	if _, _, ok := locate([]byte("a: [unclosed"), "a"); ok {
		t.Error("locate in an unparsable document reported a position")
	}
}

func TestSplitYAMLFirstLines(t *testing.T) {
	data := []byte("# leading comment\n---\na: 1\n---\n---\n\nb: 2\nc: 3\n--- # trailing comment\nd: 4")
	docs, err := splitYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	// apimachinery's reader keeps a separator that follows another as the first line of the
	// next document, so the third document starts at line 5; positions inside it count from there.
	want := []int{1, 3, 5, 10}
	if len(docs) != len(want) {
		t.Fatalf("got %d documents, want %d", len(docs), len(want))
	}
	for i, d := range docs {
		if d.index != i+1 || d.firstLine != want[i] {
			t.Errorf("document %d: index %d firstLine %d, want %d", i+1, d.index, d.firstLine, want[i])
		}
	}
}
