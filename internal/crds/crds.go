// Package crds knows which CustomResourceDefinitions mco installs and where they come from:
// verbatim copies, listed in hack/crds.txt, of the manifests generated in github.com/openshift/api.
package crds

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sources reads hack/crds.txt under root: paths relative to the openshift/api module root.
func Sources(root string) ([]string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "crds.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		paths = append(paths, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading hack/crds.txt: %w", err)
	}
	return paths, nil
}
