package noderoot

import (
	"errors"
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// DirSpec is how a directory that has to be created is left.
type DirSpec struct {
	Perm     uint32
	UID, GID int
}

// DefaultDir is what parents of written files get: 0755 root:root.
var DefaultDir = DirSpec{Perm: 0o755}

// NotDirError is a path component that has to be a directory but is something else: a file,
// or a symlink that leads nowhere inside the root (dangling, or only valid outside it).
type NotDirError struct {
	Path string
	What string // what is at Path instead, e.g. `a regular file`
	Err  error  // the errno resolving Path gave
}

func (e *NotDirError) Error() string { return e.Path + " is " + e.What }
func (e *NotDirError) Unwrap() error { return e.Err }

// MissingDirs lists, outermost first, the directories that creating dir would create. A
// component that exists but is not a directory (after following symlinks inside the root) is
// a *NotDirError: nothing may be created through it, as mkdir -p on the node would refuse too.
func (r *Root) MissingDirs(dir string) ([]string, error) {
	if dir == "/" {
		return nil, nil
	}
	if _, _, err := split(dir); err != nil {
		return nil, err
	}
	var missing []string
	var why error // why the outermost missing one did not open
	for p := dir; p != "/"; p = path.Dir(p) {
		d, err := r.openDir(p)
		if err == nil {
			if len(missing) > 0 {
				err = checkAbsent(d, missing[0], why)
			}
			d.Close()
			if err != nil {
				return nil, err
			}
			break
		}
		if !unreachable(err) {
			return nil, fmt.Errorf("looking up %s: %w", p, err)
		}
		missing = append([]string{p}, missing...)
		why = err
	}
	if len(missing) > 0 && path.Dir(missing[0]) == "/" {
		d, err := r.openDir("/")
		if err != nil {
			return nil, err
		}
		defer d.Close()
		if err := checkAbsent(d, missing[0], why); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// checkAbsent tells why p, the child of the open directory d, did not open: it is absent (so
// is everything below it), or something else is there. One fstatat on the handle in hand:
// this runs for every parent of every file a transaction writes.
func checkAbsent(d *os.File, p string, why error) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(d.Fd()), path.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	info := Info{Type: fileType(st.Mode)}
	if info.Type == Symlink {
		if info.Target, err = readlinkat(int(d.Fd()), path.Base(p)); err != nil {
			return &os.PathError{Op: "readlink", Path: p, Err: err}
		}
	}
	return notDir(p, info, why)
}

func notDir(p string, info Info, err error) *NotDirError {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		errno = unix.ENOTDIR
	}
	what := "not a directory"
	switch info.Type {
	case Regular:
		what = "a regular file, not a directory"
	case Symlink:
		switch errno {
		case unix.ENOENT:
			what = fmt.Sprintf("a symlink to %q, which does not exist inside the node root", info.Target)
		case unix.ELOOP:
			what = fmt.Sprintf("a symlink to %q, which loops", info.Target)
		default:
			what = fmt.Sprintf("a symlink to %q, which is not a directory inside the node root", info.Target)
		}
	case Directory: // made meanwhile, or a mount that cannot be looked up
		what = fmt.Sprintf("a directory that cannot be opened (%v)", errno)
	}
	return &NotDirError{Path: p, What: what, Err: errno}
}

// MkdirAll creates dir and its missing parents inside the root; directories it creates get
// spec's mode and owner. It returns exactly those it created, outermost first, also on error:
// one that appeared meanwhile is not its to report (a rollback removes what it reports).
func (r *Root) MkdirAll(dir string, spec DirSpec) ([]string, error) {
	missing, err := r.MissingDirs(dir)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	var created []string
	for _, p := range missing {
		made, err := r.mkdir(p, spec)
		if made {
			created = append(created, p)
		}
		if err != nil {
			return created, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	return created, nil
}

// mkdir creates one directory in its parent, resolved inside the root; its last component is
// a plain name, so mkdirat cannot follow anything out of the root.
func (r *Root) mkdir(p string, spec DirSpec) (made bool, err error) {
	d, base, err := r.parent(p)
	if err != nil {
		if _, why := r.MissingDirs(path.Dir(p)); why != nil { // names the component in the way
			return false, why
		}
		return false, err
	}
	defer d.Close()
	if err := unix.Mkdirat(int(d.Fd()), base, spec.Perm&0o777); err != nil {
		if !errors.Is(err, unix.EEXIST) {
			return false, &os.PathError{Op: "mkdir", Path: p, Err: err}
		}
		_, err := r.MissingDirs(p) // someone else made it: fine if it is a directory
		return false, err
	}
	return true, setDirAt(int(d.Fd()), base, p, spec)
}

// setDirAt gives a directory we just created its owner and exact mode (umask applied at mkdir).
func setDirAt(dirfd int, base, p string, spec DirSpec) error {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	return setDirFd(fd, p, spec)
}

func setDirFd(fd int, p string, spec DirSpec) error {
	if err := unix.Fchown(fd, spec.UID, spec.GID); err != nil {
		return &os.PathError{Op: "chown", Path: p, Err: err}
	}
	if err := unix.Fchmod(fd, spec.Perm); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}

// Chown sets owner and mode of an existing directory (used to fix ~/.ssh of core).
func (r *Root) Chown(p string, spec DirSpec) error {
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
	return setDirFd(fd, p, spec)
}

// IsDir reports whether p resolves, inside the root, to a directory. Absent, or not
// resolvable because a component is a file or a dangling symlink, is false.
func (r *Root) IsDir(p string) (bool, error) {
	d, err := r.openDir(p)
	if err == nil {
		d.Close()
		return true, nil
	}
	if unreachable(err) {
		return false, nil
	}
	return false, err
}

// ReadDir lists the names in directory p (nil if there is no directory at p).
func (r *Root) ReadDir(p string) ([]os.DirEntry, error) {
	d, err := r.openDir(p)
	if unreachable(err) {
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
