package diagnose

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"
)

// untar reads a bundle back as name (without the top directory) -> contents.
func untar(t *testing.T, data []byte, dir string) map[string]string {
	t.Helper()
	files, err := ReadBundle(bytes.NewReader(data), dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestWriteTarGz(t *testing.T) {
	var b Bundle
	b.Add("summary.txt", []byte("s"))
	b.Add("cluster/nodes/a.yaml", []byte("old"))
	b.Add("cluster/nodes/./a.yaml", []byte("new")) // same file: replaced
	b.AddYAML("cluster/x.yaml", map[string]any{"f": func() {}})
	b.Fail("logs/controller.log", errors.New("forbidden"))

	var out bytes.Buffer
	if err := b.WriteTarGz(&out, "mco-diagnose-1", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	files := untar(t, out.Bytes(), "mco-diagnose-1")
	want := map[string]string{
		"summary.txt":          "s",
		"cluster/nodes/a.yaml": "new",
		ErrorsFile:             "cluster/x.yaml: error marshaling into JSON: json: unsupported type: func()\nlogs/controller.log: forbidden\n",
	}
	if len(files) != len(want) {
		t.Errorf("files %v, want %v", files, want)
	}
	for name, body := range want {
		if files[name] != body {
			t.Errorf("%s = %q, want %q", name, files[name], body)
		}
	}
	if got := b.Names(); !slices.Equal(got, []string{"cluster/nodes/a.yaml", "summary.txt"}) {
		t.Errorf("Names = %v", got)
	}
}

func TestErrorsFileSaysNoneWhenAllCollected(t *testing.T) {
	var b Bundle
	var out bytes.Buffer
	if err := b.WriteTarGz(&out, "d", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if got := untar(t, out.Bytes(), "d")[ErrorsFile]; got != "none: every part was collected\n" {
		t.Errorf("errors.txt = %q", got)
	}
}
