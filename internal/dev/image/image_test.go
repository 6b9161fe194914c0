package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds the image from the committed lock as `make image` does (fetching the .debs
// into the same cache), twice, and checks that the two are the same image, that the archive
// reads back with what the pods need, and that the image's own systemctl enables a unit offline
// in a node root the way the agent's pod runs it (chroot into the image, --root=/rootfs).
// If Debian has superseded pinned packages since the lock was written, every check runs on a
// fresh lock instead (see fetchPinned).
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches Debian packages")
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("the lock pins amd64 packages, this is %s", runtime.GOARCH)
	}
	ctx := context.Background()
	mirrors, err := HostMirrors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	lock, debs := fetchPinned(ctx, t, committedLock, mirrors, cache)
	binDir := t.TempDir()
	for _, b := range Binaries {
		if err := os.WriteFile(filepath.Join(binDir, b), []byte("binary "+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := func(archive string) v1.Hash {
		base, err := BaseTree(ctx, debs)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Build(Inputs{Base: base, BinDir: binDir, Version: "v1.2.3", Commit: "abc", Arch: lock.Arch, Epoch: time.Unix(1700000000, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteArchive(archive, img, "v1.2.3"); err != nil {
			t.Fatal(err)
		}
		digest, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return digest
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	built := build(first)
	if again := build(second); built != again {
		t.Fatalf("two builds of the same inputs: digests %s and %s", built, again)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same inputs wrote different archives")
	}

	// Read back as a runtime's import would, by either tag.
	tags, _ := Tags("v1.2.3")
	if len(tags) != 2 {
		t.Fatalf("tags %v", tags)
	}
	img, err := tarball.ImageFromPath(first, &tags[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tarball.ImageFromPath(first, &tags[0]); err != nil {
		t.Fatal(err)
	}
	// The digest printed is the one the archive's image has (crane push gives a registry this).
	if d, err := img.Digest(); err != nil || d != built {
		t.Errorf("the archive's image has digest %s (%v), the build printed %s", d, err, built)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Config; !slices.Equal(c.Entrypoint, []string{Entrypoint}) || c.User != "65532:65532" ||
		!slices.Contains(c.Env, "PATH="+Path) || c.Labels["org.opencontainers.image.version"] != "v1.2.3" ||
		c.Labels["org.opencontainers.image.revision"] != "abc" || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("config %+v", cfg)
	}
	flat := Tree{}
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := flat.AddTar(rc, "image"); err != nil {
		t.Fatal(err)
	}

	for _, b := range Binaries {
		if e := lookup(t, flat, "/usr/bin/"+b); e == nil || string(e.Data) != "binary "+b || e.Mode != 0o755 {
			t.Errorf("/usr/bin/%s: %+v", b, e)
		}
	}
	for p, uid := range map[string]int{"/tmp": 0, "/home/nonroot": 65532} {
		if e := lookup(t, flat, p); e == nil || e.Type != tar.TypeDir || e.UID != uid {
			t.Errorf("%s: %+v", p, e)
		}
	}
	if e := lookup(t, flat, "/etc/passwd"); e == nil || !strings.Contains(string(e.Data), "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd: %+v", e)
	}
	bundle := lookup(t, flat, "/"+CABundle)
	if bundle == nil || !x509.NewCertPool().AppendCertsFromPEM(bundle.Data) || strings.Count(string(bundle.Data), "BEGIN CERTIFICATE") < 100 {
		t.Errorf("CA bundle missing or nearly empty")
	}
	// Every program the agent runs from the image loads: its interpreter and every library it
	// needs (DT_NEEDED, through RUNPATH and the default paths), and theirs, are in the image.
	for _, prog := range []string{"/usr/bin/systemctl", "/usr/sbin/chroot"} {
		checkLinked(t, flat, prog)
	}

	// The agent's pod: the image as /, the host's root at /rootfs, the image's systemctl
	// enabling a unit offline there.
	root := t.TempDir()
	if err := unpack(flat, root); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Fatal("running the image's systemctl through chroot, as the agent's pod does, needs root: run the tests as root")
	}
	node := filepath.Join(root, "rootfs")
	if err := os.MkdirAll(filepath.Join(node, "etc/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := "[Service]\nExecStart=/usr/bin/true\n[Install]\nWantedBy=multi-user.target\n"
	if err := os.WriteFile(filepath.Join(node, "etc/systemd/system/mco-test.service"), []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	inPod := func(args ...string) (string, error) {
		// The host's chroot enters the image; all that runs inside is the image's.
		cmd := exec.Command("chroot", append([]string{root}, args...)...)
		cmd.Env = []string{"PATH=" + Path}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := inPod("systemctl", "--root=/rootfs", "enable", "--", "mco-test.service"); err != nil {
		t.Fatalf("systemctl enable in the image: %v\n%s", err, out)
	}
	link, err := os.Readlink(filepath.Join(node, "etc/systemd/system/multi-user.target.wants/mco-test.service"))
	if err != nil || link != "/etc/systemd/system/mco-test.service" {
		t.Fatalf("enablement link: %q, %v", link, err)
	}
	if out, _ := inPod("systemctl", "--root=/rootfs", "is-enabled", "--", "mco-test.service"); strings.TrimSpace(lastLine(out)) != "enabled" {
		t.Errorf("is-enabled: %q", out)
	}
	if out, err := inPod("systemctl", "--root=/rootfs", "disable", "--", "mco-test.service"); err != nil {
		t.Fatalf("systemctl disable in the image: %v\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(node, "etc/systemd/system/multi-user.target.wants/mco-test.service")); !os.IsNotExist(err) {
		t.Errorf("disable left the link: %v", err)
	}
	// chroot /rootfs <cmd> is how the agent reaches the host's systemd; the image's chroot must run.
	if out, err := inPod("chroot", "--version"); err != nil || !strings.Contains(out, "coreutils") {
		t.Errorf("the image's chroot: %v\n%s", err, out)
	}
}

// committedLock is the lock `make image` builds from, relative to this package.
var committedLock = "../../../hack/image/debian.lock"

// fetchPinned reads the lock in file, checks it still answers what the image wants, and fetches
// its .debs as `make image` does. When the mirror no longer has some of them (a Debian point
// release or security update superseded them: the lock is old, nothing in mco broke) it logs
// that hack/image/debian.lock must be refreshed, naming them, and returns instead a lock resolved
// now into a temp dir by `make image-lock`'s code, with its .debs, so that a clean CI machine
// stays green and every check still runs. MCO_IMAGE_LOCK_STRICT=1 makes a stale lock fail.
// Any other failure fails the test.
func fetchPinned(ctx context.Context, t *testing.T, file string, mirrors Mirrors, cache string) (Lock, []string) {
	t.Helper()
	lock := readLock(t, file)
	debs, err := Fetch(ctx, lock, mirrors, cache)
	var stale *StaleLockError
	if !errors.As(err, &stale) {
		if err != nil {
			t.Fatal(err)
		}
		return lock, debs
	}
	msg := "hack/image/debian.lock is stale and must be refreshed with `make image-lock` (and committed): " +
		"Debian's mirror no longer has " + strings.Join(stale.Names(), ", ")
	if os.Getenv("MCO_IMAGE_LOCK_STRICT") == "1" {
		t.Fatalf("%s (MCO_IMAGE_LOCK_STRICT=1)\n%v", msg, err)
	}
	t.Logf("%s; testing a lock resolved now instead (MCO_IMAGE_LOCK_STRICT=1 fails here)\n%v", msg, err)
	fresh := filepath.Join(t.TempDir(), "debian.lock")
	if _, err := WriteResolved(ctx, mirrors, lock.Arch, t.TempDir(), fresh); err != nil {
		t.Fatalf("resolving a fresh lock for the stale one: %v", err)
	}
	lock = readLock(t, fresh)
	if debs, err = Fetch(ctx, lock, mirrors, cache); err != nil {
		t.Fatalf("fetching the fresh lock's packages: %v", err)
	}
	return lock, debs
}

// readLock parses file as `make image` does and checks it is for Release and Wanted.
func readLock(t *testing.T, file string) Lock {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := ParseLock(file, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.Current(file); err != nil {
		t.Fatal(err)
	}
	return lock
}

// lastLine drops systemctl's warning that /proc is not mounted (a pod has it; a bare chroot not).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// lookup finds p in the tree as the kernel would in the image: following symlinks, absolute
// ones from the image's root, in every component.
func lookup(t *testing.T, tree Tree, p string) *Entry {
	t.Helper()
	parts := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	cur := ""
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		e, ok := tree[next]
		if !ok {
			return nil
		}
		if e.Type != tar.TypeSymlink {
			cur, parts = next, parts[1:]
			continue
		}
		if hops++; hops > 40 {
			t.Fatalf("%s: too many symlinks", p)
		}
		target := e.Link
		if !path.IsAbs(target) {
			target = path.Join("/", cur, target)
		}
		parts = append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), parts[1:]...)
		cur = ""
	}
	return tree[cur]
}

// checkLinked checks that prog's interpreter and the closure of its DT_NEEDED libraries are in
// the tree, searched as ld.so searches: the needing object's RUNPATH, then Debian's paths.
func checkLinked(t *testing.T, tree Tree, prog string) {
	t.Helper()
	defaults := []string{"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib"}
	seen := map[string]bool{}
	var visit func(file string)
	visit = func(file string) {
		e := lookup(t, tree, file)
		if e == nil {
			t.Errorf("%s: not in the image", file)
			return
		}
		f, err := elf.NewFile(bytes.NewReader(e.Data))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			return
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				interp := make([]byte, p.Filesz)
				p.ReadAt(interp, 0)
				if name := strings.TrimRight(string(interp), "\x00"); lookup(t, tree, name) == nil {
					t.Errorf("%s: interpreter %s not in the image", file, name)
				}
			}
		}
		needed, _ := f.DynString(elf.DT_NEEDED)
		runpath, _ := f.DynString(elf.DT_RUNPATH)
		rpath, _ := f.DynString(elf.DT_RPATH)
		var dirs []string
		for _, rp := range append(rpath, runpath...) {
			for _, d := range strings.Split(rp, ":") {
				dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", path.Dir(file)))
			}
		}
		dirs = append(dirs, defaults...)
		for _, lib := range needed {
			found := ""
			for _, d := range dirs {
				if lookup(t, tree, path.Join(d, lib)) != nil {
					found = path.Join(d, lib)
					break
				}
			}
			if found == "" {
				t.Errorf("%s needs %s, which is not in the image (searched %v)", file, lib, dirs)
				continue
			}
			if !seen[found] {
				seen[found] = true
				visit(found)
			}
		}
	}
	visit(prog)
	if len(seen) == 0 {
		t.Errorf("%s: links no library; is it the dynamic systemd build?", prog)
	}
}

// unpack writes the tree to dir as a container runtime would unpack the image.
func unpack(tree Tree, dir string) error {
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		e, p := tree[n], filepath.Join(dir, n)
		var err error
		switch e.Type {
		case tar.TypeDir:
			if err = os.MkdirAll(p, 0o755); err == nil {
				err = os.Chmod(p, os.FileMode(e.Mode&0o777)|modeBits(e.Mode))
			}
		case tar.TypeReg:
			if err = os.WriteFile(p, e.Data, 0o600); err == nil {
				err = os.Chmod(p, os.FileMode(e.Mode&0o777)|modeBits(e.Mode))
			}
		case tar.TypeSymlink:
			err = os.Symlink(e.Link, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func modeBits(m int64) os.FileMode {
	var fm os.FileMode
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}
