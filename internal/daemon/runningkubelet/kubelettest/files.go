// Package kubelettest gives tests of code built on runningkubelet a node to read a kubelet
// from: files in memory for runningkubelet.Read, and a process directory for
// runningkubelet.Find.
package kubelettest

import (
	"os"
	"strings"
)

// Files are a node's files, by absolute path, with their contents.
type Files map[string]string

// Read is runningkubelet.Read's read: the file's contents, os.ErrNotExist for a path not in f.
func (f Files) Read(p string) ([]byte, error) {
	if s, ok := f[p]; ok {
		return []byte(s), nil
	}
	return nil, os.ErrNotExist
}

// List is runningkubelet.Read's list: the files below dir, subdirectories' included, by their
// slash-separated path in it; os.ErrNotExist when there are none, as for a missing directory.
func (f Files) List(dir string) ([]string, error) {
	var out []string
	for p := range f {
		if rel, ok := strings.CutPrefix(p, dir+"/"); ok {
			out = append(out, rel)
		}
	}
	if out == nil {
		return nil, os.ErrNotExist
	}
	return out, nil
}
