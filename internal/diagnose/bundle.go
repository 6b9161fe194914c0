package diagnose

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Bundle is the bundle's files in memory, in the order they were added, and the parts that
// could not be collected.
type Bundle struct {
	files    []file
	index    map[string]int
	failures []string
}

type file struct {
	name string
	data []byte
}

// Add adds (or replaces) the file at name, a slash-separated path inside the bundle.
func (b *Bundle) Add(name string, data []byte) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	name = path.Clean(name)
	if i, ok := b.index[name]; ok {
		b.files[i].data = data
		return
	}
	b.index[name] = len(b.files)
	b.files = append(b.files, file{name: name, data: data})
}

// AddYAML adds obj as YAML; an object that does not marshal is a failure, not a file.
func (b *Bundle) AddYAML(name string, obj any) {
	data, err := yaml.Marshal(obj)
	if err != nil {
		b.Fail(name, err)
		return
	}
	b.Add(name, data)
}

// Fail records that what could not be collected, and why.
func (b *Bundle) Fail(what string, err error) {
	b.failures = append(b.failures, fmt.Sprintf("%s: %v", what, err))
}

// Failures are the parts that could not be collected, in the order they failed.
func (b *Bundle) Failures() []string { return slices.Clone(b.failures) }

// File returns the contents of the file at name.
func (b *Bundle) File(name string) ([]byte, bool) {
	i, ok := b.index[path.Clean(name)]
	if !ok {
		return nil, false
	}
	return b.files[i].data, true
}

// Names lists the bundle's files, sorted.
func (b *Bundle) Names() []string {
	names := make([]string, len(b.files))
	for i, f := range b.files {
		names[i] = f.name
	}
	slices.Sort(names)
	return names
}

// ErrorsFile is the name of the list of parts that could not be collected; it is always in
// the bundle, saying "none" when everything was collected, so its absence never has to be read.
const ErrorsFile = "errors.txt"

func (b *Bundle) errorsText() []byte {
	if len(b.failures) == 0 {
		return []byte("none: every part was collected\n")
	}
	return []byte(strings.Join(b.failures, "\n") + "\n")
}

// WriteTarGz writes the bundle as a gzipped tar whose files are under the directory dir, with
// errors.txt added last so it also names failures of the files before it.
func (b *Bundle) WriteTarGz(w io.Writer, dir string, modTime time.Time) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: modTime}); err != nil {
		return err
	}
	write := func(name string, data []byte) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: modTime}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, f := range b.files {
		if f.name == ErrorsFile {
			continue
		}
		if err := write(f.name, f.data); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	if err := write(ErrorsFile, b.errorsText()); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadBundle reads a bundle WriteTarGz wrote: its files by their path below dir, the one
// top-level directory every entry must be under.
func ReadBundle(r io.Reader, dir string) (map[string]string, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name, ok := strings.CutPrefix(hdr.Name, dir+"/")
		if !ok {
			return nil, fmt.Errorf("%s is outside %s/", hdr.Name, dir)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[name] = string(data)
	}
}
