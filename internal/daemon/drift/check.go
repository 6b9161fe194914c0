// Package drift finds out whether a node root still holds what its current config wrote, and
// keeps finding out: a monitor re-checks on file system events and periodically.
package drift

import (
	"bytes"
	"context"
	"fmt"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// Error is a difference between the disk and the config; the agent reports it verbatim.
type Error struct {
	Path string
	What string
	// Unit is set for a unit whose enablement differs (Path is then its file).
	Unit string
	// Missing: nothing is at Path (or no directory holds it any more).
	Missing bool
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %q", e.What, e.Path) }

// Checker compares a root with one config's set. After a full check it remembers each file's
// stat, so later checks read only files whose stat moved.
type Checker struct {
	root     *noderoot.Root
	set      nodefiles.Set
	accounts *noderoot.Accounts
	verified map[string]noderoot.Info
}

// NewChecker prepares checks of root against set.
func NewChecker(root *noderoot.Root, set nodefiles.Set) (*Checker, error) {
	acc, err := root.LoadAccounts()
	if err != nil {
		return nil, err
	}
	return &Checker{root: root, set: set, accounts: acc, verified: map[string]noderoot.Info{}}, nil
}

// Check returns the first drift (an *Error) or nil. Ownership is not compared, as in OpenShift:
// tools legitimately re-own files (e.g. SELinux relabels, package scripts).
func (c *Checker) Check() error {
	for _, e := range c.set.Entries {
		if e.OnlyIfUser != "" && !c.accounts.HasUser(e.OnlyIfUser) {
			continue
		}
		if err := c.checkEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// CheckFull forgets what was verified, so every file is read again, and also checks unit
// enablement through systemd (slow: one systemctl per unit), as at start and before updates.
func (c *Checker) CheckFull(ctx context.Context, sd systemd.Manager) error {
	c.verified = map[string]noderoot.Info{}
	if err := c.Check(); err != nil {
		return err
	}
	if sd == nil {
		return nil
	}
	for _, u := range c.set.Units {
		if u.Enabled == nil || u.Mask || !u.HasFile {
			continue
		}
		enabled, err := sd.IsEnabled(ctx, u.Name)
		if err != nil {
			return err
		}
		if enabled != *u.Enabled {
			return &Error{Path: nodefiles.UnitDir + "/" + u.Name, Unit: u.Name, What: fmt.Sprintf("unit enablement mismatch (want enabled=%t)", *u.Enabled)}
		}
	}
	return nil
}

// CheckAll is every difference, not only the first, with unit enablement through systemd (nil
// sd: files only). It is how an agent finds what adopting a host it did not boot would change.
func (c *Checker) CheckAll(ctx context.Context, sd systemd.Manager) ([]*Error, error) {
	c.verified = map[string]noderoot.Info{}
	var found []*Error
	for _, e := range c.set.Entries {
		if e.OnlyIfUser != "" && !c.accounts.HasUser(e.OnlyIfUser) {
			continue
		}
		err := c.checkEntry(e)
		if d, ok := err.(*Error); ok {
			found = append(found, d)
		} else if err != nil {
			return nil, err
		}
	}
	if sd == nil {
		return found, nil
	}
	for _, u := range c.set.Units {
		if u.Enabled == nil || u.Mask || !u.HasFile {
			continue
		}
		enabled, err := sd.IsEnabled(ctx, u.Name)
		if err != nil {
			return nil, err
		}
		if enabled != *u.Enabled {
			found = append(found, &Error{Path: nodefiles.UnitDir + "/" + u.Name, Unit: u.Name,
				What: fmt.Sprintf("unit enablement mismatch (want enabled=%t)", *u.Enabled)})
		}
	}
	return found, nil
}

func (c *Checker) checkEntry(e nodefiles.Entry) error {
	info, err := c.root.Lstat(e.Path)
	if err != nil {
		return err
	}
	if prev, ok := c.verified[e.Path]; ok && sameStat(prev, info) {
		return nil
	}
	delete(c.verified, e.Path)
	if e.Link != "" {
		if info.Type != noderoot.Symlink || info.Target != e.Link {
			return &Error{Path: e.Path, What: "expected a symlink to " + e.Link, Missing: info.Type == noderoot.Missing}
		}
		c.verified[e.Path] = info
		return nil
	}
	switch info.Type {
	case noderoot.Missing:
		return &Error{Path: e.Path, What: "missing file", Missing: true}
	case noderoot.Regular:
	default:
		return &Error{Path: e.Path, What: "not a regular file"}
	}
	if info.Perm != e.Perm {
		return &Error{Path: e.Path, What: fmt.Sprintf("mode mismatch (expected %#o, found %#o) for file", e.Perm, info.Perm)}
	}
	if info.Size != int64(len(e.Data)) {
		return &Error{Path: e.Path, What: "content mismatch for file"}
	}
	data, err := c.root.ReadFile(e.Path)
	if err != nil {
		return err
	}
	if !bytes.Equal(data, e.Data) {
		return &Error{Path: e.Path, What: "content mismatch for file"}
	}
	c.verified[e.Path] = info
	return nil
}

func sameStat(a, b noderoot.Info) bool {
	return a.Type == b.Type && a.Perm == b.Perm && a.Size == b.Size && a.Ino == b.Ino && a.Dev == b.Dev &&
		a.ModTime == b.ModTime && a.ChangeTime == b.ChangeTime && a.Target == b.Target
}
