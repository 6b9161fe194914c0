package diagnose

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

// untar reads a bundle back as name (without the top directory) -> contents.
func untar(t *testing.T, data []byte, dir string) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if len(hdr.Name) <= len(dir)+1 || hdr.Name[:len(dir)+1] != dir+"/" {
			t.Errorf("%s is outside %s/", hdr.Name, dir)
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name[len(dir)+1:]] = string(body)
	}
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
