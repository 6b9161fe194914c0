package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Mirrors are the URLs of the two Debian archives a lock names, each ending in "/".
type Mirrors struct {
	Debian, Security string
}

// URL is where p's file is.
func (m Mirrors) URL(p Package) string {
	if p.Archive == ArchiveSecurity {
		return m.Security + p.Filename
	}
	return m.Debian + p.Filename
}

// HostMirrors are the Debian mirrors this machine's apt uses (so the lock names no host), or
// those MCO_DEBIAN_MIRROR and MCO_DEBIAN_SECURITY_MIRROR name: the archives' URLs, e.g.
// http://<mirror>/debian/ and http://<mirror>/debian-security/.
func HostMirrors(ctx context.Context) (Mirrors, error) {
	m := Mirrors{Debian: os.Getenv("MCO_DEBIAN_MIRROR"), Security: os.Getenv("MCO_DEBIAN_SECURITY_MIRROR")}
	if m.Debian == "" || m.Security == "" {
		out, err := exec.CommandContext(ctx, "apt-get", "indextargets", "--format", "$(REPO_URI)").Output()
		if err != nil {
			return Mirrors{}, fmt.Errorf("finding this machine's Debian mirrors (apt-get indextargets): %w; set MCO_DEBIAN_MIRROR and MCO_DEBIAN_SECURITY_MIRROR", err)
		}
		for _, uri := range strings.Fields(string(out)) {
			switch {
			case m.Debian == "" && strings.HasSuffix(uri, "/debian/"):
				m.Debian = uri
			case m.Security == "" && strings.HasSuffix(uri, "/debian-security/"):
				m.Security = uri
			}
		}
	}
	if m.Debian == "" || m.Security == "" {
		return Mirrors{}, fmt.Errorf("this machine's apt has no .../debian/ and .../debian-security/ source (got %+v): set MCO_DEBIAN_MIRROR and MCO_DEBIAN_SECURITY_MIRROR", m)
	}
	for _, u := range []*string{&m.Debian, &m.Security} {
		if !strings.HasSuffix(*u, "/") {
			*u += "/"
		}
	}
	return m, nil
}
