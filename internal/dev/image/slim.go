package image

import (
	"path"
	"strings"
)

// slimDirs are what Debian's own slim images leave out of every package
// (/etc/dpkg/dpkg.cfg.d/docker in debian:trixie-slim, which the Containerfile builds on):
// documentation, manuals and message translations. Nothing the pods run reads them: the agent
// runs the image's systemctl and chroot, which print in English without them.
var slimDirs = []string{
	"usr/share/doc", "usr/share/groff", "usr/share/info", "usr/share/linda",
	"usr/share/lintian", "usr/share/locale", "usr/share/man",
}

// slim removes slimDirs' contents from t, keeping each package's copyright file
// (usr/share/doc/<package>/copyright), as Debian's slim images do: the licences stay with
// the binaries they cover.
func slim(t Tree) {
	for name := range t {
		if dropped(name) {
			delete(t, name)
		}
	}
}

func dropped(name string) bool {
	for _, dir := range slimDirs {
		if !strings.HasPrefix(name, dir+"/") {
			continue
		}
		rest := strings.TrimPrefix(name, dir+"/")
		if dir == "usr/share/doc" && (!strings.Contains(rest, "/") || path.Base(rest) == "copyright" && strings.Count(rest, "/") == 1) {
			return false // the package's directory and its copyright
		}
		return true
	}
	return false
}
