package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Fetch brings every pinned .deb into cache (named by its sha256, so a cached file is the pinned
// one or is fetched again) and returns their paths in the lock's order. apt's own downloader
// fetches them, with the machine's apt settings (proxies), and checks each file's sha256.
//
// Pinned files the mirror answers 404 (or 410) for are superseded versions Debian removed: Fetch
// goes on with the others and then returns a *StaleLockError naming all of them. Any other failure
// (no connection, a server error, a wrong hash) is returned at once as a plain error.
func Fetch(ctx context.Context, l Lock, m Mirrors, cache string) ([]string, error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(l.Packages))
	var gone []Package
	for _, p := range l.Packages {
		path := filepath.Join(cache, p.SHA256+".deb")
		if sum, err := fileSHA256(path); err == nil && sum == p.SHA256 {
			paths = append(paths, path)
			continue
		}
		tmp := path + ".part"
		cmd := exec.CommandContext(ctx, "/usr/lib/apt/apt-helper", "download-file", m.URL(p), tmp, "SHA256:"+p.SHA256)
		// Untranslated messages, which notOnMirror reads.
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			if notOnMirror(out) {
				gone = append(gone, p)
				continue
			}
			return nil, fmt.Errorf("fetching package %s %s (%s) from %s: %w: %s",
				p.Name, p.Version, p.Filename, m.URL(p), err, strings.TrimSpace(string(out)))
		}
		if sum, err := fileSHA256(tmp); err != nil || sum != p.SHA256 {
			os.Remove(tmp)
			return nil, fmt.Errorf("package %s %s: downloaded file has sha256 %s, the lock pins %s", p.Name, p.Version, sum, p.SHA256)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	if len(gone) > 0 {
		return nil, &StaleLockError{Gone: gone, Mirrors: m}
	}
	return paths, nil
}

// StaleLockError is Fetch's error when the mirror no longer has pinned files: Debian's mirrors
// keep only the current version of a package, so a point release or security update of any
// pinned package removes the pinned .deb. Nothing is wrong with the build; the lock is old.
type StaleLockError struct {
	// Gone are the pinned packages the mirror answered "not found" for, in the lock's order.
	Gone    []Package
	Mirrors Mirrors
}

func (e *StaleLockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Debian's mirror no longer has %d pinned package(s), superseded by newer versions:", len(e.Gone))
	for _, p := range e.Gone {
		fmt.Fprintf(&b, "\n  %s %s (%s: not found)", p.Name, p.Version, e.Mirrors.URL(p))
	}
	b.WriteString("\nrun `make image-lock` to pin the current versions, and commit the new lock")
	return b.String()
}

// Names are the gone packages as "name version", for messages.
func (e *StaleLockError) Names() []string {
	names := make([]string, len(e.Gone))
	for i, p := range e.Gone {
		names[i] = p.Name + " " + p.Version
	}
	return names
}

// notFetched is apt's report of a download the server refused ("E: Failed to fetch <url>  404
// Not Found [IP: ...]", under LC_ALL=C), capturing the HTTP status.
var notFetched = regexp.MustCompile(`(?m)^E: Failed to fetch \S+\s+(\d{3})\s`)

// notOnMirror reports whether apt-helper's output says the server has no such file (404, or 410
// Gone), rather than that it could not be reached, failed, or sent other bytes.
func notOnMirror(out []byte) bool {
	m := notFetched.FindSubmatch(out)
	return m != nil && (string(m[1]) == "404" || string(m[1]) == "410")
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DefaultCache is where fetched .debs are kept between builds: $XDG_CACHE_HOME/mco/debs, else
// ~/.cache/mco/debs.
func DefaultCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the image's .debs (set XDG_CACHE_HOME): %w", err)
	}
	return filepath.Join(dir, "mco", "debs"), nil
}
