package apply

import (
	"path"
	"slices"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// enablement is the systemctl work of a transaction, batched per verb.
type enablement struct {
	// disableFirst are units leaving the config that it had enabled: disabled while their
	// [Install] section is still on disk, so no stale WantedBy= symlinks remain.
	disableFirst []string
	enable       []string
	disable      []string
	preset       []string
}

func (e enablement) empty() bool {
	return len(e.disableFirst)+len(e.enable)+len(e.disable)+len(e.preset) == 0
}

// unitSearchPath is where systemctl --root finds unit files of a root.
var unitSearchPath = []string{nodefiles.UnitDir, "/usr/lib/systemd/system", "/lib/systemd/system"}

// units decides enablement for units whose definition or files changed.
func (p *planner) units(old, new nodefiles.Set) (enablement, error) {
	var en enablement
	oldUnits := map[string]nodefiles.Unit{}
	for _, u := range old.Units {
		oldUnits[u.Name] = u
	}
	changed := map[string]bool{}
	for _, o := range p.ops {
		if e, ok := new.Lookup(o.path); ok && e.Unit != "" {
			changed[e.Unit] = true
		}
	}
	for _, u := range new.Units {
		prev, had := oldUnits[u.Name]
		delete(oldUnits, u.Name)
		if had && prev == u && !changed[u.Name] && !p.force {
			continue
		}
		if u.Mask {
			continue
		}
		if !u.HasFile {
			exists, err := p.unitFileExists(u.Name)
			if err != nil {
				return en, err
			}
			if !exists {
				continue
			}
		}
		switch {
		case u.Enabled == nil:
			en.preset = append(en.preset, u.Name)
		case *u.Enabled:
			en.enable = append(en.enable, u.Name)
		default:
			en.disable = append(en.disable, u.Name)
		}
	}
	for name, u := range oldUnits {
		if u.Enabled != nil && *u.Enabled && u.HasFile && !u.Mask {
			en.disableFirst = append(en.disableFirst, name)
		}
	}
	slices.Sort(en.disableFirst)
	return en, nil
}

func (p *planner) unitFileExists(name string) (bool, error) {
	for _, dir := range unitSearchPath {
		info, err := p.root.Lstat(path.Join(dir, name))
		if err != nil {
			return false, err
		}
		if info.Type != noderoot.Missing {
			return true, nil
		}
	}
	return false, nil
}

// snapshotUnitLinks records every symlink and directory under /etc/systemd/system.
func snapshotUnitLinks(r *noderoot.Root) ([]link, []string, error) {
	var links []link
	var dirs []string
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := r.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, de := range entries {
			p := path.Join(dir, de.Name())
			switch {
			case de.IsDir():
				dirs = append(dirs, p)
				if err := walk(p); err != nil {
					return err
				}
			default:
				info, err := r.Lstat(p)
				if err != nil {
					return err
				}
				if info.Type == noderoot.Symlink {
					links = append(links, link{Path: p, Target: info.Target})
				}
			}
		}
		return nil
	}
	if err := walk(nodefiles.UnitDir); err != nil {
		return nil, nil, err
	}
	return links, dirs, nil
}

// restoreUnitLinks makes the symlinks and directories under /etc/systemd/system what the
// snapshot says: links systemctl added are removed, links it removed come back.
func restoreUnitLinks(r *noderoot.Root, links []link, dirs []string) error {
	nowLinks, nowDirs, err := snapshotUnitLinks(r)
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, l := range links {
		want[l.Path] = l.Target
	}
	for _, l := range nowLinks {
		if t, ok := want[l.Path]; !ok || t != l.Target {
			if err := r.Remove(l.Path, true); err != nil {
				return err
			}
		}
	}
	for _, d := range dirs {
		if _, err := r.MkdirAll(d, noderoot.DefaultDir); err != nil {
			return err
		}
	}
	for _, l := range links {
		info, err := r.Lstat(l.Path)
		if err != nil {
			return err
		}
		if info.Type == noderoot.Missing || (info.Type == noderoot.Symlink && info.Target != l.Target) {
			if err := r.Symlink(l.Path, l.Target, true); err != nil {
				return err
			}
		}
	}
	keep := map[string]bool{}
	for _, d := range dirs {
		keep[d] = true
	}
	for i := len(nowDirs) - 1; i >= 0; i-- {
		if !keep[nowDirs[i]] {
			if err := r.RemoveEmptyDir(nowDirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
