package image

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Lock pins the base layer: the Debian release and architecture, the packages asked for, and
// every package installed for them (the asked ones and all they depend on) at an exact version
// and file hash. `make image-lock` writes it (Resolve); `make image` only reads it.
type Lock struct {
	Release  string
	Arch     string
	Wanted   []string
	Packages []Package
}

// Package is one pinned .deb.
type Package struct {
	Name    string
	Version string
	// Archive is the Debian archive the file is in, "debian" or "debian-security": the same
	// pool path on one and not the other.
	Archive string
	// Filename is the file's path in the archive (pool/main/...), as in the Packages index.
	Filename string
	Size     int64
	SHA256   string
}

// Archives a lock may name; Mirrors maps each to a URL.
const (
	ArchiveDebian   = "debian"
	ArchiveSecurity = "debian-security"
)

var (
	sha256Hex     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	debianName    = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	poolFilename  = regexp.MustCompile(`^pool/[A-Za-z0-9+.~%_/-]+\.deb$`)
	debianVersion = regexp.MustCompile(`^[0-9A-Za-z.+~:-]+$`)
)

const lockHeader = `# mco image base layer: the Debian packages in it, pinned (hack/image, make image).
# Written by ` + "`make image-lock`" + `, which resolves Wanted (internal/dev/image) with apt; edit that, not this.
# pkg <name> <version> <archive> <pool path> <size> <sha256>
`

// Format writes the lock in its file form, packages sorted by name.
func (l Lock) Format() []byte {
	var b bytes.Buffer
	b.WriteString(lockHeader)
	fmt.Fprintf(&b, "release %s\narch %s\nwant %s\n", l.Release, l.Arch, strings.Join(l.Wanted, " "))
	pkgs := slices.Clone(l.Packages)
	slices.SortFunc(pkgs, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range pkgs {
		fmt.Fprintf(&b, "pkg %s %s %s %s %d %s\n", p.Name, p.Version, p.Archive, p.Filename, p.Size, p.SHA256)
	}
	return b.Bytes()
}

// ParseLock reads a lock file; errors name the file, the line and what is wrong with it.
func ParseLock(file string, data []byte) (Lock, error) {
	var l Lock
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		bad := func(format string, args ...any) (Lock, error) {
			return Lock{}, fmt.Errorf("%s:%d: %s: %s", file, n, f[0], fmt.Sprintf(format, args...))
		}
		switch f[0] {
		case "release", "arch":
			if len(f) != 2 {
				return bad("want one value, got %d", len(f)-1)
			}
			if f[0] == "release" {
				l.Release = f[1]
			} else {
				l.Arch = f[1]
			}
		case "want":
			l.Wanted = f[1:]
		case "pkg":
			if len(f) != 7 {
				return bad("want 6 fields (name version archive path size sha256), got %d", len(f)-1)
			}
			p := Package{Name: f[1], Version: f[2], Archive: f[3], Filename: f[4], SHA256: f[6]}
			size, err := strconv.ParseInt(f[5], 10, 64)
			switch {
			case !debianName.MatchString(p.Name):
				return bad("package name %q is not a Debian package name", p.Name)
			case seen[p.Name]:
				return bad("package %s is pinned twice", p.Name)
			case !debianVersion.MatchString(p.Version):
				return bad("package %s: version %q is not a Debian version", p.Name, p.Version)
			case p.Archive != ArchiveDebian && p.Archive != ArchiveSecurity:
				return bad("package %s: archive %q is neither %s nor %s", p.Name, p.Archive, ArchiveDebian, ArchiveSecurity)
			case !poolFilename.MatchString(p.Filename) || strings.Contains(p.Filename, ".."):
				return bad("package %s: %q is not a pool/... .deb path", p.Name, p.Filename)
			case err != nil || size <= 0:
				return bad("package %s: size %q is not a positive number", p.Name, f[5])
			case !sha256Hex.MatchString(p.SHA256):
				return bad("package %s: sha256 %q is not 64 lowercase hex digits", p.Name, p.SHA256)
			}
			p.Size = size
			seen[p.Name] = true
			l.Packages = append(l.Packages, p)
		default:
			return Lock{}, fmt.Errorf("%s:%d: unknown keyword %q (want release, arch, want or pkg)", file, n, f[0])
		}
	}
	switch {
	case l.Release == "":
		return Lock{}, fmt.Errorf("%s: no release line", file)
	case l.Arch == "":
		return Lock{}, fmt.Errorf("%s: no arch line", file)
	case len(l.Packages) == 0:
		return Lock{}, fmt.Errorf("%s: no pkg lines", file)
	}
	for _, w := range l.Wanted {
		if !seen[w] {
			return Lock{}, fmt.Errorf("%s: wanted package %s is not pinned", file, w)
		}
	}
	return l, nil
}

// Current reports why the lock no longer answers what the image needs (Release and Wanted
// changed since it was written), or nil.
func (l Lock) Current(file string) error {
	if l.Release != Release || !slices.Equal(l.Wanted, Wanted) {
		return fmt.Errorf("%s pins %s %v, but the image wants %s %v: run `make image-lock`", file, l.Release, l.Wanted, Release, Wanted)
	}
	return nil
}
