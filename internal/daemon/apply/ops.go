package apply

import (
	"fmt"
	"path"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

type opKind int

const (
	opWrite opKind = iota
	opSymlink
	opRemove
)

// op is one mutation of one path.
type op struct {
	kind    opKind
	path    string
	data    []byte
	opts    noderoot.WriteOptions
	target  string
	parents noderoot.DirSpec
}

func (o op) String() string {
	switch o.kind {
	case opWrite:
		return "write " + o.path
	case opSymlink:
		return "link " + o.path
	}
	return "remove " + o.path
}

// planner accumulates the ops of one transaction.
type planner struct {
	root  *noderoot.Root
	acc   *noderoot.Accounts
	force bool
	ops   []op
}

// present is the entry if it applies on this node (core's keys need a core user).
func (p *planner) present(s nodefiles.Set, path string) (nodefiles.Entry, bool) {
	e, ok := s.Lookup(path)
	if ok && e.OnlyIfUser != "" && !p.acc.HasUser(e.OnlyIfUser) {
		return nodefiles.Entry{}, false
	}
	return e, ok
}

// files adds writes for new and changed entries (recording originals of newly managed paths)
// and removals or restores for entries that left the config.
func (p *planner) files(old, new nodefiles.Set) error {
	for _, e := range new.Entries {
		e, ok := p.present(new, e.Path)
		if !ok {
			continue
		}
		prev, managed := p.present(old, e.Path)
		if managed && prev.Equal(e) && !p.force {
			continue
		}
		if !managed {
			if err := p.recordOriginal(e.Path); err != nil {
				return err
			}
		}
		if err := p.write(e); err != nil {
			return err
		}
	}
	for _, e := range old.Entries {
		if _, ok := p.present(old, e.Path); !ok {
			continue
		}
		if _, still := p.present(new, e.Path); still {
			continue
		}
		if err := p.restoreOriginal(e.Path); err != nil {
			return err
		}
	}
	return nil
}

func (p *planner) write(e nodefiles.Entry) error {
	parents := noderoot.DirSpec{Perm: e.ParentPerm}
	if e.ParentOwner != "" {
		uid, gid, err := p.userAndGroup(e.ParentOwner)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
		parents.UID, parents.GID = uid, gid
	}
	if e.Link != "" {
		p.ops = append(p.ops, op{kind: opSymlink, path: e.Path, target: e.Link, parents: parents})
		return nil
	}
	uid, gid, err := p.owner(e)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Path, err)
	}
	p.ops = append(p.ops, op{kind: opWrite, path: e.Path, data: e.Data, parents: parents,
		opts: noderoot.WriteOptions{Perm: e.Perm, UID: uid, GID: gid, Deferred: true}})
	return nil
}

func (p *planner) owner(e nodefiles.Entry) (uid, gid int, err error) {
	switch {
	case e.UID != nil:
		uid = *e.UID
	case e.User != "":
		if uid, err = p.acc.UID(e.User); err != nil {
			return 0, 0, err
		}
	}
	switch {
	case e.GID != nil:
		gid = *e.GID
	case e.Group != "":
		if gid, err = p.acc.GID(e.Group); err != nil && e.Group == e.User {
			// A user-private group may only exist as the user's login group.
			gid, err = p.acc.PrimaryGID(e.User)
		}
	}
	return uid, gid, err
}

func (p *planner) userAndGroup(user string) (int, int, error) {
	uid, err := p.acc.UID(user)
	if err != nil {
		return 0, 0, err
	}
	gid, err := p.acc.PrimaryGID(user)
	return uid, gid, err
}

// recordOriginal keeps what was at path before a MachineConfig first writes it: a copy of the
// file or link, or a stamp saying nothing was there. An existing record is never replaced: it
// describes the node before any MachineConfig.
func (p *planner) recordOriginal(pth string) error {
	for _, rec := range []string{origPath(pth), noOrigPath(pth)} {
		if ok, err := p.root.Exists(rec); err != nil || ok {
			return err
		}
	}
	info, err := p.root.Lstat(pth)
	if err != nil {
		return err
	}
	state := noderoot.DefaultDir
	switch info.Type {
	case noderoot.Missing:
		p.ops = append(p.ops, op{kind: opWrite, path: noOrigPath(pth), parents: state,
			opts: noderoot.WriteOptions{Perm: 0o644, Deferred: true}})
	case noderoot.Regular:
		data, err := p.root.ReadFile(pth)
		if err != nil {
			return err
		}
		p.ops = append(p.ops, op{kind: opWrite, path: origPath(pth), data: data, parents: state,
			opts: noderoot.WriteOptions{Perm: info.Perm, UID: info.UID, GID: info.GID, Deferred: true}})
	case noderoot.Symlink:
		p.ops = append(p.ops, op{kind: opSymlink, path: origPath(pth), target: info.Target, parents: state})
	default:
		return fmt.Errorf("%s is a directory or special file; a MachineConfig file cannot replace it", pth)
	}
	return nil
}

// restoreOriginal returns a path that left the config to how it was before any MachineConfig:
// the recorded original, or nothing. Without any record (the file came with the first boot's
// Ignition config) the path is deleted, except that an ostree pristine copy in /usr/etc is
// restored.
func (p *planner) restoreOriginal(pth string) error {
	orig, noorig := origPath(pth), noOrigPath(pth)
	info, err := p.root.Lstat(orig)
	if err != nil {
		return err
	}
	switch info.Type {
	case noderoot.Regular:
		data, err := p.root.ReadFile(orig)
		if err != nil {
			return err
		}
		p.ops = append(p.ops,
			op{kind: opWrite, path: pth, data: data, parents: noderoot.DefaultDir,
				opts: noderoot.WriteOptions{Perm: info.Perm, UID: info.UID, GID: info.GID, Deferred: true}},
			op{kind: opRemove, path: orig})
		return nil
	case noderoot.Symlink:
		p.ops = append(p.ops, op{kind: opSymlink, path: pth, target: info.Target, parents: noderoot.DefaultDir},
			op{kind: opRemove, path: orig})
		return nil
	}
	if ok, err := p.root.Exists(noorig); err != nil {
		return err
	} else if ok {
		p.ops = append(p.ops, op{kind: opRemove, path: pth}, op{kind: opRemove, path: noorig})
		return nil
	}
	if pristine := path.Join("/usr", pth); strings.HasPrefix(pth, "/etc/") {
		if pi, err := p.root.Lstat(pristine); err == nil && pi.Type == noderoot.Regular {
			data, err := p.root.ReadFile(pristine)
			if err != nil {
				return err
			}
			p.ops = append(p.ops, op{kind: opWrite, path: pth, data: data, parents: noderoot.DefaultDir,
				opts: noderoot.WriteOptions{Perm: pi.Perm, UID: pi.UID, GID: pi.GID, Deferred: true}})
			return nil
		}
	}
	p.ops = append(p.ops, op{kind: opRemove, path: pth})
	return nil
}
