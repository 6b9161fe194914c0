package noderoot

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// DirSpec is how a directory that has to be created is left.
type DirSpec struct {
	Perm     uint32
	UID, GID int
}

// DefaultDir is what parents of written files get: 0755 root:root.
var DefaultDir = DirSpec{Perm: 0o755}

// MissingDirs lists, outermost first, the directories that creating dir would create.
func (r *Root) MissingDirs(dir string) ([]string, error) {
	if dir == "/" {
		return nil, nil
	}
	if _, _, err := split(dir); err != nil {
		return nil, err
	}
	var missing []string
	for p := dir; p != "/"; p = path.Dir(p) {
		d, err := r.openDir(p)
		if err == nil {
			d.Close()
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("looking up %s: %w", p, err)
		}
		missing = append([]string{p}, missing...)
	}
	return missing, nil
}

// MkdirAll creates dir and its missing parents inside the root; directories it creates get
// spec's mode and owner. It returns those it created, outermost first.
func (r *Root) MkdirAll(dir string, spec DirSpec) ([]string, error) {
	missing, err := r.MissingDirs(dir)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	h, err := pathrs.MkdirAllHandle(r.handle, strings.TrimPrefix(dir, "/"), os.FileMode(spec.Perm&0o777))
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	h.Close()
	for _, p := range missing {
		if err := r.setDir(p, spec); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// setDir gives a directory we just created its owner and exact mode (umask applied at mkdir).
func (r *Root) setDir(p string, spec DirSpec) error {
	d, err := r.openDir(p)
	if err != nil {
		return err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, spec.UID, spec.GID); err != nil {
		return &os.PathError{Op: "chown", Path: p, Err: err}
	}
	if err := unix.Fchmod(fd, spec.Perm); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}

// Chown sets owner and mode of an existing directory (used to fix ~/.ssh of core).
func (r *Root) Chown(p string, spec DirSpec) error { return r.setDir(p, spec) }

// ReadDir lists the names in directory p (nil if it does not exist).
func (r *Root) ReadDir(p string) ([]os.DirEntry, error) {
	d, err := r.openDir(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	return f.ReadDir(-1)
}
