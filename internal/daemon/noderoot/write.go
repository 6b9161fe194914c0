package noderoot

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// WriteOptions say how WriteFile leaves the file.
type WriteOptions struct {
	Perm     uint32
	UID, GID int
	// Deferred skips the file and directory fsyncs; the caller must call SyncDirs (and have
	// synced the data) before relying on the write, e.g. once for a whole batch.
	Deferred bool
}

// WriteFile replaces p atomically: a temp file in the same directory gets the data, is synced,
// owned, given its mode and renamed over p; then the directory is synced. Readers see the old
// or the new file, never a partial one. The parent directory must exist.
func (r *Root) WriteFile(p string, data []byte, opts WriteOptions) error {
	return r.WriteFrom(p, bytes.NewReader(data), opts)
}

// WriteFrom is WriteFile with the data read from src, for files too large to hold in memory.
func (r *Root) WriteFrom(p string, src io.Reader, opts WriteOptions) error {
	d, base, err := r.parent(p)
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	defer d.Close()
	dirfd := int(d.Fd())
	tmp := tempName(base)
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = fillTemp(f, src, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		if pe, ok := err.(*os.PathError); ok { // the temp file's name means nothing to a reader
			err = pe.Err
		}
		return &os.PathError{Op: "write", Path: p, Err: err}
	}
	if opts.Deferred {
		return nil
	}
	return syncDirFd(dirfd)
}

// fillTemp writes and syncs the data, then sets owner before mode: chown clears setuid and
// setgid bits, so the other order would lose them.
func fillTemp(f *os.File, src io.Reader, opts WriteOptions) error {
	if _, err := io.Copy(f, src); err != nil {
		return err
	}
	if !opts.Deferred {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := unix.Fchown(int(f.Fd()), opts.UID, opts.GID); err != nil {
		return err
	}
	return unix.Fchmod(int(f.Fd()), opts.Perm)
}

func tempName(base string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "." + base + ".mco-" + hex.EncodeToString(b[:])
}

func syncDirFd(dirfd int) error {
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// Symlink atomically makes p a symlink to target (replacing whatever is at p).
func (r *Root) Symlink(p, target string, deferred bool) error {
	d, base, err := r.parent(p)
	if err != nil {
		return fmt.Errorf("linking %s: %w", p, err)
	}
	defer d.Close()
	dirfd := int(d.Fd())
	tmp := tempName(base)
	if err := unix.Symlinkat(target, dirfd, tmp); err != nil {
		return &os.PathError{Op: "symlink", Path: p, Err: err}
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return &os.PathError{Op: "symlink", Path: p, Err: err}
	}
	if deferred {
		return nil
	}
	return syncDirFd(dirfd)
}

// Remove unlinks the file or symlink at p; a missing p is not an error.
func (r *Root) Remove(p string, deferred bool) error {
	return r.unlink(p, 0, deferred)
}

// RemoveEmptyDir removes p if it is an empty directory. Anything else there (a symlink, a
// file, a directory with entries or a mount on it) or nothing is left as it is: callers undo a
// directory they created, and must not fail on, or remove, what they find in its place.
func (r *Root) RemoveEmptyDir(p string) error {
	err := r.unlink(p, unix.AT_REMOVEDIR, false)
	for _, ok := range []error{unix.ENOTEMPTY, unix.EEXIST, unix.ENOTDIR, unix.EBUSY} {
		if errors.Is(err, ok) {
			return nil
		}
	}
	return err
}

// unlink treats a p that cannot exist, because a parent component is absent, a file or a
// dangling symlink, as already gone.
func (r *Root) unlink(p string, flags int, deferred bool) error {
	d, base, err := r.parent(p)
	if unreachable(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), base, flags); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	if deferred {
		return nil
	}
	return syncDirFd(int(d.Fd()))
}

// Link makes newPath a hard link to the file at oldPath. Hard links keep a file's content,
// mode and owner at no cost, which is what a backup of a file that is about to be replaced by
// rename needs. Across file systems it fails with EXDEV; callers then copy.
func (r *Root) Link(oldPath, newPath string) error {
	od, obase, err := r.parent(oldPath)
	if err != nil {
		return err
	}
	defer od.Close()
	nd, nbase, err := r.parent(newPath)
	if err != nil {
		return err
	}
	defer nd.Close()
	_ = unix.Unlinkat(int(nd.Fd()), nbase, 0)
	if err := unix.Linkat(int(od.Fd()), obase, int(nd.Fd()), nbase, 0); err != nil {
		return &os.PathError{Op: "link", Path: newPath, Err: err}
	}
	return nil
}

// LinkOver atomically replaces dst with a hard link to the file at src (a temp link next to
// dst renamed over it); src keeps its name. It writes no data, so it works on a full file
// system, and the file keeps its inode, mode and owner. Across file systems it fails with
// EXDEV; callers then copy.
func (r *Root) LinkOver(src, dst string, deferred bool) error {
	sd, sbase, err := r.parent(src)
	if err != nil {
		return err
	}
	defer sd.Close()
	dd, dbase, err := r.parent(dst)
	if err != nil {
		return err
	}
	defer dd.Close()
	dirfd := int(dd.Fd())
	tmp := tempName(dbase)
	if err := unix.Linkat(int(sd.Fd()), sbase, dirfd, tmp, 0); err != nil {
		return &os.PathError{Op: "link", Path: dst, Err: err}
	}
	err = unix.Renameat(dirfd, tmp, dirfd, dbase)
	// Also after success: renaming a link over another link of the same inode does nothing.
	_ = unix.Unlinkat(dirfd, tmp, 0)
	if err != nil {
		return &os.PathError{Op: "rename", Path: dst, Err: err}
	}
	if deferred {
		return nil
	}
	return syncDirFd(dirfd)
}

// CopyFile copies the regular file at src to dst with the same mode and owner.
func (r *Root) CopyFile(src, dst string, deferred bool) error {
	info, err := r.Lstat(src)
	if err != nil {
		return err
	}
	if info.Type != Regular {
		return fmt.Errorf("copying %s: not a regular file", src)
	}
	data, err := r.ReadFile(src)
	if err != nil {
		return err
	}
	return r.WriteFile(dst, data, WriteOptions{Perm: info.Perm, UID: info.UID, GID: info.GID, Deferred: deferred})
}

// SyncDirs fsyncs the directories holding the given paths and the file systems they are on,
// once each: the end of a batch of deferred writes.
func (r *Root) SyncDirs(paths []string) error {
	seenDir := map[string]bool{}
	seenDev := map[uint64]bool{}
	for _, p := range paths {
		dir, _, err := split(p)
		if err != nil || seenDir[dir] {
			continue
		}
		seenDir[dir] = true
		d, err := r.openDir(dir)
		if unreachable(err) {
			continue // no directory there, nothing of ours to sync
		}
		if err != nil {
			return err
		}
		err = r.syncOne(d, seenDev)
		d.Close()
		if unsyncable(err) {
			continue // nothing can have been written there to make durable
		}
		if err != nil {
			return fmt.Errorf("syncing %s: %w", dir, err)
		}
	}
	return nil
}

// unsyncable: the directory is on a file system that keeps nothing to sync (fsync of a /proc
// or /sys directory fails with EINVAL), which a symlink planted on the host can lead a path
// into. No write of ours can be there, so it is no reason to fail a commit or a rollback.
func unsyncable(err error) bool {
	return errors.Is(err, unix.EINVAL)
}

func (r *Root) syncOne(d *os.File, seenDev map[uint64]bool) error {
	fd, err := unix.Openat(int(d.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if !seenDev[st.Dev] {
		seenDev[st.Dev] = true
		// One syncfs flushes every deferred file write on this file system.
		if err := unix.Syncfs(fd); err != nil {
			return err
		}
	}
	return unix.Fsync(fd)
}
