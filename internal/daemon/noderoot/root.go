package noderoot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// Root is a node root directory.
type Root struct {
	path   string
	handle *os.File // O_PATH handle every lookup starts from
}

// Open opens the root directory at dir.
func Open(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening node root %s: %w", dir, err)
	}
	return &Root{path: dir, handle: os.NewFile(uintptr(fd), dir)}, nil
}

// Close releases the root handle.
func (r *Root) Close() error { return r.handle.Close() }

// Path is the directory the root is mounted at, for tools that take a root (systemctl --root).
func (r *Root) Path() string { return r.path }

// split checks that p is a clean absolute path naming something below the root and splits it.
func split(p string) (dir, base string, err error) {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return "", "", fmt.Errorf("%q: not a clean absolute path below /", p)
	}
	return path.Dir(p), path.Base(p), nil
}

// openDir resolves dir inside the root and returns an O_PATH handle to it.
func (r *Root) openDir(dir string) (*os.File, error) {
	if dir == "/" {
		fd, err := unix.Openat(int(r.handle.Fd()), ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), r.path), nil
	}
	f, err := pathrs.OpenatInRoot(r.handle, strings.TrimPrefix(dir, "/"))
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: dir, Err: unix.ENOTDIR}
	}
	return f, nil
}

// parent opens p's directory; base is the last component, which callers never follow.
func (r *Root) parent(p string) (*os.File, string, error) {
	dir, base, err := split(p)
	if err != nil {
		return nil, "", err
	}
	d, err := r.openDir(dir)
	if err != nil {
		return nil, "", err
	}
	return d, base, nil
}

// FileType is what Lstat found.
type FileType int

const (
	Missing FileType = iota
	Regular
	Symlink
	Directory
	Other
)

// Info is the lstat of a path; Target is set for symlinks.
type Info struct {
	Type     FileType
	Perm     uint32 // permission bits including setuid, setgid and sticky
	UID, GID int
	Size     int64
	ModTime  unix.Timespec
	// ChangeTime moves on any write or chmod, even one that restores the mtime.
	ChangeTime unix.Timespec
	Ino, Dev   uint64
	Target     string
}

// Lstat describes p without following a symlink at p. A p that cannot exist, because a
// parent is missing, not a directory, or a symlink that dangles or loops, is Missing.
func (r *Root) Lstat(p string) (Info, error) {
	d, base, err := r.parent(p)
	if unreachable(err) {
		return Info{Type: Missing}, nil
	}
	if err != nil {
		return Info{}, err
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return Info{Type: Missing}, nil
		}
		return Info{}, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	info := Info{
		Perm: st.Mode & 0o7777, UID: int(st.Uid), GID: int(st.Gid), Size: st.Size,
		ModTime: st.Mtim, ChangeTime: st.Ctim, Ino: st.Ino, Dev: st.Dev,
	}
	info.Type = fileType(st.Mode)
	if info.Type == Symlink {
		if info.Target, err = readlinkat(int(d.Fd()), base); err != nil {
			return Info{}, &os.PathError{Op: "readlink", Path: p, Err: err}
		}
	}
	return info, nil
}

func fileType(mode uint32) FileType {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return Regular
	case unix.S_IFDIR:
		return Directory
	case unix.S_IFLNK:
		return Symlink
	}
	return Other
}

func readlinkat(dirfd int, base string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, base, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// ReadFile reads the regular file at p; a symlink at p is an error, not followed.
func (r *Root) ReadFile(p string) ([]byte, error) {
	f, err := r.OpenFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenFile opens the regular file at p for reading without following a symlink at p.
func (r *Root) OpenFile(p string) (*os.File, error) {
	d, base, err := r.parent(p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// Exists reports whether anything (even a dangling symlink) is at p.
func (r *Root) Exists(p string) (bool, error) {
	info, err := r.Lstat(p)
	return info.Type != Missing, err
}

// unreachable: resolving a path failed because it cannot exist (a component is missing, not
// a directory, or a symlink that dangles or loops), not because of an I/O error.
func unreachable(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// IsNotExist reports whether err means a path is missing.
func IsNotExist(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOENT)
}
