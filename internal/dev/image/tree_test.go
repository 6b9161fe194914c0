package image

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
	"time"
)

// debTar is a package's data tar as dpkg-deb --fsys-tarfile gives it.
func debTar(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		data := []byte(h.Linkname)
		if h.Typeflag == tar.TypeReg {
			h.Size, h.Linkname = int64(len(data)), ""
		} else {
			data = nil
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	return b.Bytes()
}

func TestTreeAddTar(t *testing.T) {
	tree := Tree{}
	// Regular files carry their content in Linkname here (debTar's shorthand).
	pkg := debTar(t,
		tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeReg, Name: "./lib64/ld.so", Linkname: "loader", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeReg, Name: "./usr/bin/mount", Linkname: "m", Mode: 0o4755},
		tar.Header{Typeflag: tar.TypeLink, Name: "./usr/bin/umount", Linkname: "./usr/bin/mount"},
		tar.Header{Typeflag: tar.TypeSymlink, Name: "./usr/lib/libx.so.1", Linkname: "libx.so.1.2"},
	)
	if err := tree.AddTar(bytes.NewReader(pkg), "a.deb"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Entry{
		"usr/lib64/ld.so":   {Type: tar.TypeReg, Mode: 0o755, Data: []byte("loader")}, // merged /usr, as dpkg puts it
		"usr/bin/mount":     {Type: tar.TypeReg, Mode: 0o4755, Data: []byte("m")},     // setuid kept
		"usr/bin/umount":    {Type: tar.TypeReg, Mode: 0o4755, Data: []byte("m")},     // hard link copied
		"usr/lib/libx.so.1": {Type: tar.TypeSymlink, Link: "libx.so.1.2"},
		"usr/lib64":         {Type: tar.TypeDir, Mode: 0o755}, // parents made
		"usr":               {Type: tar.TypeDir, Mode: 0o755},
	} {
		got, ok := tree[name]
		if !ok || got.Type != want.Type || got.Mode&0o7777 != want.Mode || !bytes.Equal(got.Data, want.Data) || got.Link != want.Link {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
	}
	if _, ok := tree["lib64"]; ok {
		t.Errorf("lib64 should be under /usr")
	}

	// The same file again from another package is fine; different content is a conflict.
	same := debTar(t, tar.Header{Typeflag: tar.TypeReg, Name: "./usr/bin/mount", Linkname: "m", Mode: 0o4755})
	if err := tree.AddTar(bytes.NewReader(same), "b.deb"); err != nil {
		t.Fatal(err)
	}
	other := debTar(t, tar.Header{Typeflag: tar.TypeReg, Name: "./bin/mount", Linkname: "other", Mode: 0o755})
	if err := tree.AddTar(bytes.NewReader(other), "c.deb"); err == nil || !strings.Contains(err.Error(), "/usr/bin/mount: a.deb and c.deb both ship it") {
		t.Fatalf("conflict: %v", err)
	}
	dangling := debTar(t, tar.Header{Typeflag: tar.TypeLink, Name: "./usr/bin/x", Linkname: "./usr/bin/nothing"})
	if err := tree.AddTar(bytes.NewReader(dangling), "d.deb"); err == nil || !strings.Contains(err.Error(), "d.deb: hard link ./usr/bin/x") {
		t.Fatalf("dangling hard link: %v", err)
	}
}

func TestTreeWriteTarIsReproducible(t *testing.T) {
	epoch := time.Unix(1700000000, 0)
	build := func(order []string) []byte {
		tree := Tree{}
		for _, n := range order {
			tree.Add(n, &Entry{Type: tar.TypeReg, Mode: 0o644, Data: []byte(n), Origin: "test"})
		}
		var b bytes.Buffer
		if err := tree.WriteTar(&b, epoch); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := build([]string{"usr/bin/b", "etc/a", "usr/bin-x/c"})
	b := build([]string{"usr/bin-x/c", "usr/bin/b", "etc/a"})
	if !bytes.Equal(a, b) {
		t.Fatal("the order files were added in changed the layer")
	}
	tr := tar.NewReader(bytes.NewReader(a))
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: mtime %v owner %d:%d %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		names = append(names, h.Name)
	}
	// Path order: every directory before what it holds ("-" sorts before "/").
	if got := strings.Join(names, " "); got != "etc/ etc/a usr/ usr/bin/ usr/bin-x/ usr/bin-x/c usr/bin/b" {
		t.Fatalf("entries %s", got)
	}
}

func TestCABundle(t *testing.T) {
	tree := Tree{}
	tree.Add("usr/share/ca-certificates/mozilla/B.crt", &Entry{Type: tar.TypeReg, Data: []byte("b")})
	tree.Add("usr/share/ca-certificates/mozilla/A.crt", &Entry{Type: tar.TypeReg, Data: []byte("a\n")})
	tree.Add("usr/share/ca-certificates/README", &Entry{Type: tar.TypeReg, Data: []byte("no")})
	got, err := caBundle(tree)
	if err != nil || string(got) != "a\nb\n" {
		t.Fatalf("bundle %q, %v", got, err)
	}
	if _, err := caBundle(Tree{}); err == nil || !strings.Contains(err.Error(), "ca-certificates") {
		t.Fatalf("no certificates: %v", err)
	}
}
