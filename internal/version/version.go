// Package version reports what build of mco is running. The values are stamped by the
// Makefile through -ldflags; a plain `go build` reports "dev".
package version

import (
	"fmt"
	"runtime"
)

var (
	// Version is the release or `git describe` of the build.
	Version = "dev"
	// Commit is the git commit the binary was built from. Controllers stamp it on the
	// objects they generate (generated-by-controller-version), so it must be stable per build.
	Commit = "unknown"
)

// Info is the printable build description.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build description of the running binary.
func Get() Info {
	return Info{
		Version:   Version,
		Commit:    Commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

func (i Info) String() string {
	return fmt.Sprintf("mco %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
