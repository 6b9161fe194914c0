package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// Tree is a filesystem being assembled, by clean path without a leading "/".
type Tree map[string]*Entry

// Entry is one file, directory or symlink of a Tree.
type Entry struct {
	Type     byte  // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	Mode     int64 // permission bits, with setuid, setgid and sticky
	UID, GID int
	Data     []byte
	Link     string
	// Origin is what put it there (a package), for conflict errors.
	Origin string
}

// mergedUsr are the top-level directories that are symlinks into /usr on Debian since trixie
// (base-files ships them); a package's file under one of them lands under /usr, as dpkg on such
// a system puts it.
var mergedUsr = []string{"bin", "lib", "lib64", "sbin"}

func canonical(name string) string {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	first, _, _ := strings.Cut(p, "/")
	if slices.Contains(mergedUsr, first) {
		return "usr/" + p
	}
	return p
}

// Add puts e at name, creating its parent directories (0755); a directory already there stays,
// a different file already there is a conflict.
func (t Tree) Add(name string, e *Entry) error {
	if top := strings.TrimPrefix(path.Clean("/"+name), "/"); slices.Contains(mergedUsr, top) && e.Type == tar.TypeSymlink && e.Link == "usr/"+top {
		// The merged-/usr link itself, as base-files ships it.
		return t.put(top, e)
	}
	p := canonical(name)
	if p == "" {
		return nil
	}
	if dir := path.Dir(p); dir != "." {
		if err := t.Add(dir, &Entry{Type: tar.TypeDir, Mode: 0o755, Origin: e.Origin}); err != nil {
			return err
		}
	}
	return t.put(p, e)
}

func (t Tree) put(p string, e *Entry) error {
	old, ok := t[p]
	switch {
	case !ok:
		t[p] = e
	case old.Type == tar.TypeDir && e.Type == tar.TypeDir:
	case old.Type == e.Type && bytes.Equal(old.Data, e.Data) && old.Link == e.Link:
	default:
		return fmt.Errorf("/%s: %s and %s both ship it, differently", p, old.Origin, e.Origin)
	}
	return nil
}

// AddTar adds every entry of a tar stream (a package's files, as dpkg-deb --fsys-tarfile gives
// them); hard links become copies, so the layer never depends on the order of its entries.
func (t Tree) AddTar(r io.Reader, origin string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", origin, err)
		}
		e := &Entry{Mode: h.Mode & 0o7777, UID: h.Uid, GID: h.Gid, Origin: origin}
		switch h.Typeflag {
		case tar.TypeDir:
			e.Type = tar.TypeDir
		case tar.TypeReg:
			e.Type = tar.TypeReg
			if e.Data, err = io.ReadAll(tr); err != nil {
				return fmt.Errorf("%s: %s: %w", origin, h.Name, err)
			}
		case tar.TypeSymlink:
			e.Type, e.Link = tar.TypeSymlink, h.Linkname
		case tar.TypeLink:
			target, ok := t[canonical(h.Linkname)]
			if !ok || target.Type != tar.TypeReg {
				return fmt.Errorf("%s: hard link %s to %s, which is not a file before it", origin, h.Name, h.Linkname)
			}
			copied := *target
			e = &copied
		default:
			return fmt.Errorf("%s: %s: unsupported entry type %q", origin, h.Name, h.Typeflag)
		}
		if err := t.Add(h.Name, e); err != nil {
			return err
		}
	}
}

// WriteTar writes the tree as a layer: entries in path order, every one owned as its Entry says
// (root unless set), stamped with epoch, so the same tree always gives the same bytes.
func (t Tree) WriteTar(w io.Writer, epoch time.Time) error {
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	slices.Sort(names)
	tw := tar.NewWriter(w)
	for _, name := range names {
		e := t[name]
		h := &tar.Header{
			Typeflag: e.Type, Name: name, Linkname: e.Link, Mode: e.Mode,
			Uid: e.UID, Gid: e.GID, ModTime: epoch, Format: tar.FormatPAX,
		}
		switch e.Type {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeReg:
			h.Size = int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("/%s: %w", name, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return fmt.Errorf("/%s: %w", name, err)
		}
	}
	return tw.Close()
}
