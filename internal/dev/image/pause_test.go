package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeELF is the smallest file debug/elf reads as a 64-bit little-endian executable of
// machine: its header and one program header of each of progs (PT_INTERP makes it dynamic).
func fakeELF(t *testing.T, typ elf.Type, machine elf.Machine, progs ...elf.ProgType) []byte {
	t.Helper()
	h := elf.Header64{
		Type: uint16(typ), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: uint16(len(progs)),
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	for _, p := range progs {
		binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(p)})
	}
	return b.Bytes()
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pause")
	if err := os.WriteFile(file, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestWritePause: the archive loads by PauseRef as a runtime's import would, holds the binary as
// an executable /pause owned by root and nothing else, runs it as Kubernetes' pause image does,
// says the binary's architecture, and two writes of one binary are the same bytes and digest
// (in any process: every time in it is the Unix epoch).
func TestWritePause(t *testing.T) {
	for _, tc := range []struct {
		machine elf.Machine
		arch    string
	}{
		{elf.EM_X86_64, "amd64"},
		{elf.EM_AARCH64, "arm64"},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			binary := fakeELF(t, elf.ET_EXEC, tc.machine, elf.PT_LOAD)
			bin := writeFile(t, binary)
			dir := t.TempDir()
			first, second := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
			for _, out := range []string{first, second} {
				if err := WritePause(bin, out, PauseRef); err != nil {
					t.Fatal(err)
				}
			}
			a, _ := os.ReadFile(first)
			b, _ := os.ReadFile(second)
			if !bytes.Equal(a, b) {
				t.Fatal("two writes of the same binary differ")
			}
			tag, err := name.NewTag(PauseRef, name.StrictValidation)
			if err != nil {
				t.Fatal(err)
			}
			img, err := tarball.ImageFromPath(first, &tag)
			if err != nil {
				t.Fatal(err)
			}
			again, err := tarball.ImageFromPath(second, &tag)
			if err != nil {
				t.Fatal(err)
			}
			d1, err1 := img.Digest()
			d2, err2 := again.Digest()
			if err1 != nil || err2 != nil || d1 != d2 {
				t.Fatalf("digests %s (%v) and %s (%v)", d1, err1, d2, err2)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if c := cfg.Config; !slices.Equal(c.Entrypoint, []string{"/pause"}) || c.User != "65535:65535" || len(c.Cmd) != 0 ||
				cfg.OS != "linux" || cfg.Architecture != tc.arch || !cfg.Created.Time.Equal(time.Unix(0, 0)) {
				t.Errorf("config %+v", cfg)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("layers %d (%v), want 1", len(layers), err)
			}
			files := readLayer(t, img)
			if len(files) != 1 {
				t.Fatalf("entries %v, want only /pause", slices.Collect(maps.Keys(files)))
			}
			h, ok := files["pause"]
			if !ok || h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(time.Unix(0, 0)) || !bytes.Equal(h.data, binary) {
				t.Errorf("/pause: %+v", h.Header)
			}
		})
	}

	// The digest is the binary's: another binary, another image.
	one, err := PauseImage(writeFile(t, fakeELF(t, elf.ET_EXEC, elf.EM_X86_64, elf.PT_LOAD)))
	if err != nil {
		t.Fatal(err)
	}
	other, err := PauseImage(writeFile(t, fakeELF(t, elf.ET_EXEC, elf.EM_X86_64, elf.PT_LOAD, elf.PT_NOTE)))
	if err != nil {
		t.Fatal(err)
	}
	if d1, d2 := digest(t, one), digest(t, other); d1 == d2 {
		t.Errorf("two binaries, one digest %s", d1)
	}
}

// TestWritePauseRejects: what cannot run as the image's only file, or a name that is not a tag,
// is an error naming the file (or name) and why, and writes nothing.
func TestWritePauseRejects(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-pause")
	for _, tc := range []struct {
		name   string
		binary string
		ref    string
		want   []string
	}{
		{"missing", missing, PauseRef, []string{missing, "no such file"}},
		{"script", writeFile(t, []byte("#!/bin/sh\nsleep infinity\n")), PauseRef, []string{"pause binary", "not an ELF executable"}},
		{"dynamic", writeFile(t, fakeELF(t, elf.ET_EXEC, elf.EM_X86_64, elf.PT_INTERP, elf.PT_LOAD)), PauseRef, []string{"pause binary", "dynamically linked", "CGO_ENABLED=0"}},
		{"object file", writeFile(t, fakeELF(t, elf.ET_REL, elf.EM_X86_64)), PauseRef, []string{"pause binary", "ET_REL", "not an executable"}},
		{"unknown machine", writeFile(t, fakeELF(t, elf.ET_EXEC, elf.EM_SPARCV9, elf.PT_LOAD)), PauseRef, []string{"pause binary", "EM_SPARCV9"}},
		{"bad name", writeFile(t, fakeELF(t, elf.ET_EXEC, elf.EM_X86_64, elf.PT_LOAD)), "registry.k8s.io/Pause:3.10", []string{`"registry.k8s.io/Pause:3.10"`, "not an image tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "pause.tar")
			err := WritePause(tc.binary, out, tc.ref)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.binary != missing && tc.name != "bad name" && !strings.Contains(err.Error(), tc.binary) {
				t.Errorf("error %q does not name %s", err, tc.binary)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written: %v", out, err)
			}
		})
	}
}

// TestPauseImageOfRealPause: the pause program as `make tools` builds it (static Go) passes the
// checks and is labelled with this machine's architecture.
func TestPauseImageOfRealPause(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hack/tools/pause")
	}
	bin := filepath.Join(t.TempDir(), "pause")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./pause")
	build.Dir = filepath.Join("..", "..", "..", "hack", "tools")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building hack/tools/pause: %v\n%s", err, out)
	}
	img, err := PauseImage(bin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil || cfg.Architecture != runtime.GOARCH {
		t.Fatalf("architecture %q (%v), want %s", cfg.Architecture, err, runtime.GOARCH)
	}
}

type layerFile struct {
	*tar.Header
	data []byte
}

// readLayer is every entry of the image's filesystem by name, as a runtime unpacks it.
func readLayer(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]layerFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = layerFile{h, data}
	}
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
