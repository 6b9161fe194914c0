package image

import (
	"archive/tar"
	"slices"
	"testing"
)

func TestSlimKeepsWhatRunsAndTheLicences(t *testing.T) {
	tree := Tree{}
	for _, name := range []string{
		"usr/bin/systemctl",
		"usr/lib/x86_64-linux-gnu/libc.so.6",
		"usr/share/doc/systemd/copyright",
		"usr/share/doc/systemd/changelog.Debian.gz",
		"usr/share/doc/systemd/examples/x.conf",
		"usr/share/doc/libc6/copyright",
		"usr/share/locale/de/LC_MESSAGES/coreutils.mo",
		"usr/share/man/man1/systemctl.1.gz",
		"usr/share/info/coreutils.info.gz",
		"usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt",
		"usr/share/systemd/language-fallback-map",
		"usr/share/docs-not-doc/x",
	} {
		if err := tree.Add(name, &Entry{Type: tar.TypeReg, Mode: 0o644, Data: []byte(name)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tree.Add("usr/share/doc/libsystemd0", &Entry{Type: tar.TypeSymlink, Mode: 0o777, Link: "systemd"}); err != nil {
		t.Fatal(err)
	}
	slim(tree)
	var files []string
	for name, e := range tree {
		if e.Type != tar.TypeDir {
			files = append(files, name)
		}
	}
	slices.Sort(files)
	want := []string{
		"usr/bin/systemctl",
		"usr/lib/x86_64-linux-gnu/libc.so.6",
		"usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt",
		"usr/share/doc/libc6/copyright",
		"usr/share/doc/libsystemd0",
		"usr/share/doc/systemd/copyright",
		"usr/share/docs-not-doc/x",
		"usr/share/systemd/language-fallback-map",
	}
	if !slices.Equal(files, want) {
		t.Errorf("after slim:\n got %q\nwant %q", files, want)
	}
}
