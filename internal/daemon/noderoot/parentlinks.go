package noderoot

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHops is where the kernel gives up following symlinks too (ELOOP after 40).
const maxHops = 40

// Hop is a symbolic link met in a parent position of a path, as the node resolves it.
type Hop struct {
	// Link is the link's own path, with the parents before it already resolved.
	Link string
	// Target is what the link holds, as read.
	Target string
	// Into is where it points inside the root: Target made absolute and cleaned, its ".."
	// stopping at "/" as the kernel's do (the target itself may hold further links).
	Into string
}

// Parents is what resolving a path's parent directory inside the root met: the facts a
// check of planted links (package plantedlink) judges, read but not judged here.
type Parents struct {
	// Hops are the symlinks followed, in order.
	Hops []Hop
	// Resolved is the parent as the node resolves it; past the first missing component (or
	// one that is no directory) the rest is kept as written.
	Resolved string
	// Existing is the deepest directory of Resolved that exists, and FSType its file
	// system's statfs magic (0 when it could not be told, or no link was met).
	Existing string
	FSType   int64
	// Loops is set when more than 40 links were followed, where the kernel stops too.
	Loops bool
}

// ResolveParents follows p's parent directory inside the root as openat2 RESOLVE_IN_ROOT
// does (symlinks followed, absolute ones from the root, ".." stopping at it), one lstat and
// readlink per component, and reports every link on the way. It changes nothing.
func (r *Root) ResolveParents(p string) (Parents, error) {
	dir, _, err := split(p)
	if err != nil {
		return Parents{}, err
	}
	var out Parents
	cur := "/"
	pending := components(dir)
walk:
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if name == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, name)
		info, err := r.Lstat(next)
		if err != nil {
			return Parents{}, err
		}
		switch info.Type {
		case Directory:
			cur = next
		case Symlink:
			if len(out.Hops) == maxHops {
				out.Loops = true
				cur = path.Join(append([]string{next}, pending...)...)
				break walk
			}
			into := path.Join(cur, info.Target) // path.Join's ".." stops at "/", as the kernel's
			if path.IsAbs(info.Target) {
				into, cur = path.Clean(info.Target), "/"
			}
			out.Hops = append(out.Hops, Hop{Link: next, Target: info.Target, Into: into})
			pending = append(components(info.Target), pending...)
		default: // missing (created later) or not a directory (refused by MissingDirs)
			out.Existing = cur
			cur = path.Join(append([]string{next}, pending...)...)
			break walk
		}
	}
	out.Resolved = cur
	if out.Existing == "" {
		out.Existing = cur
	}
	if len(out.Hops) > 0 { // a path without links is judged by its name alone
		out.FSType = r.fsType(out.Existing)
	}
	return out, nil
}

// components splits a path into its names, dropping empty ones and ".".
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// fsType is the statfs magic of the file system holding directory dir inside the root, 0 when
// it cannot be told (the check it feeds then rests on the path alone).
func (r *Root) fsType(dir string) int64 {
	d, err := r.openDir(dir)
	if err != nil {
		return 0
	}
	defer d.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(d.Fd()), &st); err != nil {
		return 0
	}
	return int64(st.Type)
}
