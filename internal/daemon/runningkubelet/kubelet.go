// Package runningkubelet reads what the node's running kubelet was started with: its command
// line, and the --config file and --config-dir drop-ins it names, read through the kubelet's
// own root (the agent's pod shares the host's PID namespace). What the kubelet makes of them is
// kubeletfiles.Effective's business; Check tells whether a drop-in of mco's is in effect.
package runningkubelet

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// Kubelet is a kubelet's command line and the configuration files it names, as they are now.
type Kubelet struct {
	// PID of the process, 0 when read from given arguments.
	PID int
	// Args is the command line, the program first.
	Args []string
	// ConfigPath is --config ("" without); Config its contents (nil without).
	ConfigPath string
	Config     []byte
	// DropInDir is --config-dir, made absolute ("" without); DropIns the files below it by
	// their slash-separated path in it (nil without --config-dir, empty for a missing or empty
	// directory), every file: kubeletfiles.DropInOrder picks the ones the kubelet reads.
	DropInDir string
	DropIns   map[string][]byte
}

// Flag is the value of --name in args (as "--name=v" or "--name v"; a single dash too), the
// last one winning as with the kubelet's flags; "" when absent.
func Flag(args []string, name string) string {
	v := ""
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if k, val, ok := strings.Cut(a, "="); ok && k == name {
			v = val
		} else if a == name && i+1 < len(args) {
			v = args[i+1]
		}
	}
	return v
}

// Read reads the files args name. read reads a file; list lists the files below a directory
// (slash-separated paths in it, subdirectories' files included; os.ErrNotExist for a missing
// one). Relative paths are resolved against cwd, as the kubelet resolves them against its
// working directory.
func Read(args []string, cwd string, read func(string) ([]byte, error), list func(string) ([]string, error)) (Kubelet, error) {
	k := Kubelet{Args: args}
	abs := func(p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		return path.Join(cwd, p)
	}
	if file := Flag(args, "config"); file != "" {
		k.ConfigPath = abs(file)
		data, err := read(k.ConfigPath)
		if err != nil {
			return Kubelet{}, fmt.Errorf("the kubelet's --config %s: %w", file, err)
		}
		k.Config = data
	}
	if dir := Flag(args, "config-dir"); dir != "" {
		k.DropInDir = abs(dir)
		names, err := list(k.DropInDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Kubelet{}, fmt.Errorf("the kubelet's --config-dir %s: %w", dir, err)
		}
		k.DropIns = map[string][]byte{}
		for _, n := range names {
			data, err := read(path.Join(k.DropInDir, n))
			if err != nil {
				return Kubelet{}, fmt.Errorf("the kubelet's --config-dir %s: %w", dir, err)
			}
			k.DropIns[n] = data
		}
	}
	return k, nil
}

// Find finds the kubelet among the processes of procDir (/proc) and reads its files through
// its own root: absolute symlinks there resolve as they do for the kubelet, not in the
// agent's container. found is false when no kubelet runs.
func Find(procDir string) (k Kubelet, found bool, err error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return Kubelet{}, false, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		proc := filepath.Join(procDir, e.Name())
		if comm, err := os.ReadFile(filepath.Join(proc, "comm")); err != nil || strings.TrimSpace(string(comm)) != "kubelet" {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline"))
		if err != nil {
			continue // it ended
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		cwd, err := os.Readlink(filepath.Join(proc, "cwd"))
		if err != nil {
			cwd = "/" // only relative paths need it; they then fail to read
		}
		root := filepath.Join(proc, "root")
		k, err := Read(args, cwd, func(p string) ([]byte, error) { return readIn(root, p) },
			func(d string) ([]string, error) { return listIn(root, d) })
		k.PID = pid
		return k, true, err
	}
	return Kubelet{}, false, nil
}

// readIn reads the file at p (absolute, as the kubelet sees it) inside root, following
// symlinks as the kubelet would.
func readIn(root, p string) ([]byte, error) {
	h, err := pathrs.OpenInRoot(root, p)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	f, err := pathrs.Reopen(h, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// listIn lists the files below dir inside root as the kubelet's filepath.WalkDir finds them:
// it descends into directories, and anything else (a symlink too) is a file to read.
func listIn(root, dir string) ([]string, error) {
	var out []string
	var walk func(rel string) error
	walk = func(rel string) error {
		h, err := pathrs.OpenInRoot(root, path.Join(dir, rel))
		if err != nil {
			return err
		}
		defer h.Close()
		d, err := pathrs.Reopen(h, os.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		defer d.Close()
		entries, err := d.ReadDir(-1)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := path.Join(rel, e.Name())
			if e.IsDir() {
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			out = append(out, p)
		}
		return nil
	}
	return out, walk("")
}
