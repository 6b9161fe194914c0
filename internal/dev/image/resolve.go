package image

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Resolve pins Wanted and everything it depends on (not what it recommends) at the versions
// Release, Release-updates and Release-security hold now, as `apt-get install
// --no-install-recommends` on an empty Debian slim-like root would choose them. It runs apt
// against a private state under work (lists, an empty dpkg status), never the machine's own.
func Resolve(ctx context.Context, m Mirrors, arch, work string) (Lock, error) {
	root := filepath.Join(work, "apt-"+Release+"-"+arch)
	for _, d := range []string{"etc/apt/apt.conf.d", "etc/apt/preferences.d", "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/lib/dpkg"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return Lock{}, err
		}
	}
	sources := fmt.Sprintf(`deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %[1]s %[3]s main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %[1]s %[3]s-updates main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %[2]s %[3]s-security main
`, m.Debian, m.Security, Release)
	if err := os.WriteFile(filepath.Join(root, "etc/apt/sources.list"), []byte(sources), 0o644); err != nil {
		return Lock{}, err
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		return Lock{}, err
	}
	apt := func(name string, args ...string) ([]byte, error) {
		opts := []string{
			"-o", "Dir=" + root,
			"-o", "Dir::State::status=" + filepath.Join(root, "var/lib/dpkg/status"),
			"-o", "Dir::Etc::Parts=" + filepath.Join(root, "etc/apt/apt.conf.d"),
			"-o", "APT::Architecture=" + arch,
			"-o", "APT::Architectures=" + arch,
			"-o", "Debug::NoLocking=1",
		}
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, name, append(opts, args...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	if _, err := apt("apt-get", "update", "-qq"); err != nil {
		return Lock{}, err
	}
	uris, err := apt("apt-get", append([]string{"install", "--print-uris", "-qq", "--no-install-recommends"}, Wanted...)...)
	if err != nil {
		return Lock{}, err
	}
	archives, pins, err := parsePrintURIs(uris, m)
	if err != nil {
		return Lock{}, err
	}
	show, err := apt("apt-cache", append([]string{"show"}, pins...)...)
	if err != nil {
		return Lock{}, err
	}
	pkgs, err := parseStanzas(show, archives)
	if err != nil {
		return Lock{}, err
	}
	return Lock{Release: Release, Arch: arch, Wanted: Wanted, Packages: pkgs}, nil
}

// WriteResolved is `make image-lock`: Resolve (apt's private state under work), then write the
// lock to file. TestImage runs it too, into a temp dir, when the committed lock went stale.
func WriteResolved(ctx context.Context, m Mirrors, arch, work, file string) (Lock, error) {
	l, err := Resolve(ctx, m, arch, work)
	if err != nil {
		return Lock{}, err
	}
	if err := os.WriteFile(file, l.Format(), 0o644); err != nil {
		return Lock{}, err
	}
	return l, nil
}

// parsePrintURIs reads apt-get --print-uris lines ('URL' file size hash) into each package's
// archive and its name=version pin.
func parsePrintURIs(out []byte, m Mirrors) (map[string]string, []string, error) {
	archives := map[string]string{}
	var pins []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, nil, fmt.Errorf("apt-get --print-uris: unexpected line %q", line)
		}
		u := strings.Trim(f[0], "'")
		archive := ArchiveDebian
		switch {
		case strings.HasPrefix(u, m.Security):
			archive = ArchiveSecurity
		case !strings.HasPrefix(u, m.Debian):
			return nil, nil, fmt.Errorf("apt-get --print-uris: %s is on neither mirror %s nor %s", u, m.Debian, m.Security)
		}
		parts := strings.Split(strings.TrimSuffix(f[1], ".deb"), "_")
		if len(parts) != 3 {
			return nil, nil, fmt.Errorf("apt-get --print-uris: %q is not name_version_arch.deb", f[1])
		}
		version, err := url.PathUnescape(parts[1])
		if err != nil {
			return nil, nil, fmt.Errorf("apt-get --print-uris: %q: %w", f[1], err)
		}
		archives[parts[0]] = archive
		pins = append(pins, parts[0]+"="+version)
	}
	return archives, pins, nil
}

// parseStanzas reads apt-cache show's records of the pinned packages.
func parseStanzas(out []byte, archives map[string]string) ([]Package, error) {
	var pkgs []Package
	var p Package
	flush := func() error {
		if p.Name == "" {
			return nil
		}
		if p.SHA256 == "" || p.Filename == "" || p.Size == 0 {
			return fmt.Errorf("apt-cache show %s=%s: no Filename, Size or SHA256", p.Name, p.Version)
		}
		p.Archive = archives[p.Name]
		pkgs = append(pkgs, p)
		p = Package{}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "Package":
			p.Name = value
		case "Version":
			p.Version = value
		case "Filename":
			p.Filename = value
		case "SHA256":
			p.SHA256 = value
		case "Size":
			p.Size, _ = strconv.ParseInt(value, 10, 64)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(pkgs) != len(archives) {
		return nil, fmt.Errorf("apt-cache show: %d records for %d packages", len(pkgs), len(archives))
	}
	return pkgs, nil
}
