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
	"strings"
)

// Fetch brings every pinned .deb into cache (named by its sha256, so a cached file is the pinned
// one or is fetched again) and returns their paths in the lock's order. apt's own downloader
// fetches them, with the machine's apt settings (proxies), and checks each file's sha256.
func Fetch(ctx context.Context, l Lock, m Mirrors, cache string) ([]string, error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(l.Packages))
	for _, p := range l.Packages {
		path := filepath.Join(cache, p.SHA256+".deb")
		if sum, err := fileSHA256(path); err == nil && sum == p.SHA256 {
			paths = append(paths, path)
			continue
		}
		tmp := path + ".part"
		out, err := exec.CommandContext(ctx, "/usr/lib/apt/apt-helper", "download-file", m.URL(p), tmp, "SHA256:"+p.SHA256).CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("fetching package %s %s (%s) from %s: %w: %s\n"+
				"Debian's mirrors keep only the current version of a package: if this one was superseded, run `make image-lock` and commit the new lock",
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
	return paths, nil
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
