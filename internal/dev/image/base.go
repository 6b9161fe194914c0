package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// BaseTree is the base layer's filesystem: the files of every .deb (unpacked, no maintainer
// scripts run) but their documentation and translations (slim), and what those scripts or other
// packages would have made that the pods need.
func BaseTree(ctx context.Context, debs []string) (Tree, error) {
	t := Tree{}
	for _, deb := range debs {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w", deb, err)
		}
		addErr := t.AddTar(out, filepath.Base(deb))
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", deb, err, strings.TrimSpace(stderr.String()))
		}
		if addErr != nil {
			return nil, addErr
		}
	}
	slim(t)
	if err := addSystemFiles(t); err != nil {
		return nil, err
	}
	return t, nil
}

// addSystemFiles adds what base-files, base-passwd and ca-certificates' postinst make on a
// Debian system and the image needs: the merged-/usr links (the dynamic loader is
// /lib64/ld-linux-x86-64.so.2), the users the pods run as, a /tmp, and the CA bundle.
func addSystemFiles(t Tree) error {
	const origin = "internal/dev/image"
	for _, dir := range mergedUsr {
		if err := t.Add("usr/"+dir, &Entry{Type: tar.TypeDir, Mode: 0o755, Origin: origin}); err != nil {
			return err
		}
		if err := t.Add(dir, &Entry{Type: tar.TypeSymlink, Mode: 0o777, Link: "usr/" + dir, Origin: origin}); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		e    Entry
	}{
		{"etc/passwd", Entry{Type: tar.TypeReg, Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" + NonrootPasswd + "\n")}},
		{"etc/group", Entry{Type: tar.TypeReg, Mode: 0o644, Data: []byte("root:x:0:\n" + NonrootGroup + "\n")}},
		{"root", Entry{Type: tar.TypeDir, Mode: 0o700}},
		{"home/nonroot", Entry{Type: tar.TypeDir, Mode: 0o700, UID: 65532, GID: 65532}},
		{"tmp", Entry{Type: tar.TypeDir, Mode: 0o1777}},
	}
	for _, f := range files {
		e := f.e
		e.Origin = origin
		if err := t.Add(f.name, &e); err != nil {
			return err
		}
	}
	bundle, err := caBundle(t)
	if err != nil {
		return err
	}
	return t.Add(CABundle, &Entry{Type: tar.TypeReg, Mode: 0o644, Data: bundle, Origin: origin})
}

// The user and group of User, as the Containerfile adds them too (distroless's "nonroot"), so
// tools that look the user up find it.
const (
	NonrootPasswd = "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin"
	NonrootGroup  = "nonroot:x:65532:"
)

// CABundle is where Go's crypto/x509 (and OpenSSL) look first for the system's roots.
const CABundle = "etc/ssl/certs/ca-certificates.crt"

// caBundle concatenates ca-certificates' certificates in path order, each ending in a newline:
// what its postinst's update-ca-certificates writes with every certificate enabled, the default.
func caBundle(t Tree) ([]byte, error) {
	var names []string
	for name, e := range t {
		if e.Type == tar.TypeReg && strings.HasPrefix(name, "usr/share/ca-certificates/") && strings.HasSuffix(name, ".crt") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no certificates under /usr/share/ca-certificates: is ca-certificates in the lock?")
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, name := range names {
		b.Write(t[name].Data)
		if !bytes.HasSuffix(t[name].Data, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}
