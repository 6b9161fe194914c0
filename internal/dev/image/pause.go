package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// PauseRef is the name the pod sandbox image is written under: the tag containerd's
// sandbox_image names, so that containerd finds it imported and never tries to pull it (no
// registry is reachable from a dev cluster).
const PauseRef = "registry.k8s.io/pause:3.10"

// PauseEntrypoint is where the pause program is in its image, as in Kubernetes' own.
const PauseEntrypoint = "/pause"

// pauseUser is the user Kubernetes' own pause image runs as (its build/pause/Dockerfile).
const pauseUser = "65535:65535"

// pauseEpoch stamps the pause image's file and config: a fixed time, so the digest depends on
// the binary alone.
var pauseEpoch = time.Unix(0, 0).UTC()

// elfArch is the image architecture of an executable for each ELF machine Go builds for.
var elfArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_386:     "386",
	elf.EM_ARM:     "arm",
	elf.EM_PPC64:   "ppc64le", // little-endian only, see staticExecutableArch
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// PauseImage is the pod sandbox image: the program at pauseBinary (hack/tools/pause, `make
// tools` builds it into bin/tools/pause) as its only file and entrypoint, running as Kubernetes'
// pause image runs, for the architecture the binary is built for. The image holds nothing else,
// so the binary must be a static executable.
func PauseImage(pauseBinary string) (v1.Image, error) {
	data, err := os.ReadFile(pauseBinary)
	if err != nil {
		return nil, fmt.Errorf("pause binary: %w", err)
	}
	arch, err := staticExecutableArch(data)
	if err != nil {
		return nil, fmt.Errorf("pause binary %s: %w", pauseBinary, err)
	}
	files := Tree{}
	if err := files.Add(PauseEntrypoint, &Entry{Type: tar.TypeReg, Mode: 0o755, Data: data, Origin: pauseBinary}); err != nil {
		return nil, err
	}
	l, err := layer(files, pauseEpoch)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: pauseEpoch}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: l, History: v1.History{Created: created, CreatedBy: "pause (hack/tools/pause)"}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS, cfg.Created = arch, "linux", created
	cfg.Config = v1.Config{Entrypoint: []string{PauseEntrypoint}, User: pauseUser}
	return mutate.ConfigFile(img, cfg)
}

// WritePause writes PauseImage(pauseBinary) to outTar as a docker-archive tagged ref (PauseRef
// for containerd's sandbox_image), which `ctr -n k8s.io images import` reads. The same binary
// always gives the same archive.
func WritePause(pauseBinary, outTar, ref string) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("pause image name %q is not an image tag: %w", ref, err)
	}
	img, err := PauseImage(pauseBinary)
	if err != nil {
		return err
	}
	return writeArchiveFile(outTar, img, []name.Tag{tag})
}

// staticExecutableArch checks that data is an ELF executable that needs no dynamic loader (the
// image has none) and returns the image architecture it runs on.
func staticExecutableArch(data []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not an ELF executable: %w", err)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("ELF type %s, not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("dynamically linked (it asks for a program interpreter), but the pause image holds nothing else: build it with CGO_ENABLED=0")
		}
	}
	arch, ok := elfArch[f.Machine]
	if !ok || (f.Machine == elf.EM_PPC64 && f.Data != elf.ELFDATA2LSB) {
		return "", fmt.Errorf("ELF machine %s (%s, %s) is not an architecture Go builds Linux images for", f.Machine, f.Class, f.Data)
	}
	return arch, nil
}
