package daemon

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// cachedFile is a host file the agent reads often and the host rarely changes (containerd's
// config.toml, read for every config loaded and every update planned): its contents as last
// read, kept while one lstat says the file is the one read.
type cachedFile struct {
	// data is the contents read when the file's stat was key; valid when anything is kept.
	key   fileKey
	data  []byte
	valid bool
}

// fileKey is what changes when a file is written or replaced: its ctime moves with every
// write, chmod or rename onto it (even one that puts the mtime back), and a replaced file is
// another inode.
type fileKey struct {
	size         int64
	mtime, ctime unix.Timespec
	ino, dev     uint64
}

// racyWindow: timestamps advance by the kernel's clock tick (or coarser, on some file
// systems), so a file changed this recently can change again, to the same size, without its
// stat changing. Its contents are not kept until it has been still that long, as git treats a
// file as racily clean.
const racyWindow = 2 * time.Second

// fileReader is the part of the node root cachedFile reads through.
type fileReader interface {
	Lstat(p string) (noderoot.Info, error)
	ReadFile(p string) ([]byte, error)
}

// read is the file at path's contents (nil when it is missing), read from root only when it
// changed since the kept read; now is the wall clock before the call. One cachedFile keeps one
// path.
func (c *cachedFile) read(root fileReader, path string, now time.Time) ([]byte, error) {
	info, err := root.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Type != noderoot.Regular {
		// Nothing to keep: missing, or something ReadFile refuses (a symlink) as it did before.
		c.valid, c.data = false, nil
		data, err := root.ReadFile(path)
		if noderoot.IsNotExist(err) {
			return nil, nil
		}
		return data, err
	}
	key := fileKey{size: info.Size, mtime: info.ModTime, ctime: info.ChangeTime, ino: info.Ino, dev: info.Dev}
	if c.valid && key == c.key {
		return c.data, nil
	}
	data, err := root.ReadFile(path)
	if err != nil {
		c.valid, c.data = false, nil
		if noderoot.IsNotExist(err) { // removed between the lstat and the read
			return nil, nil
		}
		return nil, err
	}
	// A write after the lstat leaves a newer key on the file, so the next call reads again.
	c.valid = time.Unix(info.ChangeTime.Unix()).Before(now.Add(-racyWindow))
	c.key, c.data = key, data
	if !c.valid {
		c.data = nil
	}
	return data, nil
}
