package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileKind is how a file's documents are split.
type fileKind int

const (
	yamlFile   fileKind = iota // "---"-separated YAML documents (JSON documents are YAML too)
	jsonFile                   // a stream of JSON values
	butaneFile                 // YAML documents that must all be Butane configs
)

// kindOf tells by the name's ending how to read a file; ok is false for files we do not read.
func kindOf(name string) (fileKind, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return yamlFile, true
	case ".json":
		return jsonFile, true
	case ".bu":
		return butaneFile, true
	}
	return 0, false
}

// expand turns the paths an admin gave into the manifest files to read, in a stable order:
// each path in the order given, directories walked lexically.
func expand(paths []string) ([]string, Errors) {
	var files []string
	var errs Errors
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Reason: pathReason(err)})
			continue
		}
		if !info.IsDir() {
			if _, ok := kindOf(p); !ok {
				errs = append(errs, &Error{File: p, Reason: "not a manifest file (want .yaml, .yml, .json or .bu)"})
				continue
			}
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, &Error{File: path, Reason: pathReason(err)})
				return nil
			}
			// Hidden entries are version-control and editor state, never manifests.
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if _, ok := kindOf(path); ok && isRegularFile(path, d) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, &Error{File: p, Reason: pathReason(err)})
		}
	}
	return files, errs
}

// pathReason drops the path from an *fs.PathError, since Error already names the file.
func pathReason(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// isRegularFile follows symlinks, as mounted ConfigMaps and Secrets are symlinks to files.
func isRegularFile(path string, d fs.DirEntry) bool {
	if d.Type().IsRegular() {
		return true
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
