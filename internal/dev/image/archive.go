package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// WriteArchive writes img as a docker-archive under Tags(version): the layout of
// go-containerregistry's tarball.Write (manifest.json, the config as "sha256:<hex>", each layer
// compressed as "<hex>.tar.gz"), which `docker load`, `podman load` and `ctr images import` read.
// Written here rather than with tarball.MultiRefWrite because that one orders RepoTags by Go's
// map iteration, so two builds of the same image gave different archives.
func WriteArchive(file string, img v1.Image, version string) error {
	tags, err := Tags(version)
	if err != nil {
		return err
	}
	return writeArchiveFile(file, img, tags)
}

// writeArchiveFile writes the archive next to file and renames it into place, so a failed write
// never leaves a truncated archive under file's name.
func writeArchiveFile(file string, img v1.Image, tags []name.Tag) error {
	tmp := file + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = writeArchive(f, img, tags)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return os.Rename(tmp, file)
}

type archiveManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func writeArchive(w io.Writer, img v1.Image, tags []name.Tag) error {
	tw := tar.NewWriter(w)
	put := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = fmt.Errorf("%s: wrote %d bytes of %d", name, n, size)
		}
		return err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	m := archiveManifest{Config: cfgName.String()}
	for _, t := range tags {
		m.RepoTags = append(m.RepoTags, t.String())
	}
	if err := put(m.Config, int64(len(cfg)), bytes.NewReader(cfg)); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		name := digest.Hex + ".tar.gz"
		err = put(name, size, rc)
		rc.Close()
		if err != nil {
			return err
		}
		m.Layers = append(m.Layers, name)
	}
	manifest, err := json.Marshal([]archiveManifest{m})
	if err != nil {
		return err
	}
	if err := put("manifest.json", int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return err
	}
	return tw.Close()
}
