// Package nodefiles turns a rendered config into the exact set of paths it puts on a node:
// files, unit files, dropins, masks and core's SSH keys, each with content, mode and owner.
// The applier writes this set and the drift checker compares the disk with it, so both agree
// by construction on what "the node is in this config" means.
package nodefiles

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// Well-known locations on a node.
const (
	UnitDir = "/etc/systemd/system"
	// SSHKeysPath is where core's keys from the config go (OpenShift's fragment file, read by
	// sshd through AuthorizedKeysCommand / the authorized_keys.d convention).
	SSHKeysPath = "/home/core/.ssh/authorized_keys.d/ignition"
	// DevNull is what a masked unit links to.
	DevNull = "/dev/null"
)

// Entry is one path the config owns.
type Entry struct {
	Path string
	// Link, when set, makes the entry a symlink with this target (masked units).
	Link string
	Data []byte
	Perm uint32
	// Owner by id, else by name looked up in the node's passwd/group; default root.
	UID, GID   *int
	User       string
	Group      string
	ParentPerm uint32
	// ParentOwner, when set, owns directories created for this entry (core's ~/.ssh).
	ParentOwner string
	// Unit is the unit an entry belongs to (its file or a dropin).
	Unit string
	// OnlyIfUser: the entry exists only on nodes that have this user (core's keys).
	OnlyIfUser string
}

// Equal reports whether two entries put the same thing on disk.
func (e Entry) Equal(o Entry) bool {
	return e.Path == o.Path && e.Link == o.Link && bytes.Equal(e.Data, o.Data) && e.Perm == o.Perm &&
		eqInt(e.UID, o.UID) && eqInt(e.GID, o.GID) && e.User == o.User && e.Group == o.Group &&
		e.ParentPerm == o.ParentPerm && e.ParentOwner == o.ParentOwner && e.OnlyIfUser == o.OnlyIfUser
}

func eqInt(a, b *int) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

// Unit is a unit's enablement; its files are entries.
type Unit struct {
	Name string
	// Enabled nil means "as the presets say".
	Enabled *bool
	Mask    bool
	// HasFile: the config writes the unit file (contents or mask); enablement needs one.
	HasFile bool
}

// Set is everything a config owns on a node, entries sorted by path.
type Set struct {
	Entries []Entry
	Units   []Unit
	// CorePassword is core's password hash when the config sets one.
	CorePassword *string
	// ManagesCore is true when the config mentions the core user at all.
	ManagesCore bool
}

// Lookup finds the entry for path.
func (s Set) Lookup(p string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(s.Entries, p, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return Entry{}, false
	}
	return s.Entries[i], true
}

// FromConfig computes the set of a parsed config. Sources other than inline data: URLs are
// errors: a node agent never fetches content.
func FromConfig(cfg ignition.Config) (Set, error) {
	var s Set
	for _, f := range cfg.Storage.Files {
		e, err := fileEntry(f)
		if err != nil {
			return Set{}, err
		}
		s.Entries = append(s.Entries, e)
	}
	for _, u := range cfg.Systemd.Units {
		if err := checkUnitNames(u); err != nil {
			return Set{}, err
		}
		s.Entries = append(s.Entries, unitEntries(u)...)
		s.Units = append(s.Units, Unit{Name: u.Name, Enabled: u.Enabled, Mask: u.Mask != nil && *u.Mask,
			HasFile: (u.Mask != nil && *u.Mask) || u.Contents != nil})
	}
	for _, u := range cfg.Passwd.Users {
		if u.Name != protocol.CoreUser {
			continue
		}
		s.ManagesCore = true
		s.CorePassword = u.PasswordHash
		if len(u.SSHAuthorizedKeys) > 0 {
			s.Entries = append(s.Entries, sshEntry(u.SSHAuthorizedKeys))
		}
	}
	for _, e := range s.Entries {
		if reason := render.PathProblem(e.Path); reason != "" {
			return Set{}, fmt.Errorf("refusing the config: %s", reason)
		}
	}
	slices.SortFunc(s.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(s.Entries); i++ {
		if s.Entries[i].Path == s.Entries[i-1].Path {
			return Set{}, fmt.Errorf("%s is declared twice (as a file and a unit or dropin)", s.Entries[i].Path)
		}
	}
	slices.SortFunc(s.Units, func(a, b Unit) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// FileData is what the config writes at path p, decoded as FromConfig decodes it; found is
// false when the config has no such file.
func FileData(cfg ignition.Config, p string) (data []byte, found bool, err error) {
	for _, f := range cfg.Storage.Files {
		if path.Clean(f.Path) != path.Clean(p) {
			continue
		}
		e, err := fileEntry(f)
		return e.Data, true, err
	}
	return nil, false, nil
}

// checkUnitNames refuses a unit or dropin name that would leave /etc/systemd/system once
// joined to it (path.Join cleans "../../proc/x.service" into /proc/x.service). Render refuses
// these too; the agent does not trust that every config it is given was rendered by a
// controller that did.
func checkUnitNames(u types.Unit) error {
	if reason := render.NameProblem("unit", u.Name); reason != "" {
		return fmt.Errorf("refusing the config: %s", reason)
	}
	for _, d := range u.Dropins {
		if reason := render.NameProblem("dropin", d.Name); reason != "" {
			return fmt.Errorf("refusing the config: unit %s: %s", u.Name, reason)
		}
	}
	return nil
}

func fileEntry(f types.File) (Entry, error) {
	if len(f.Append) > 0 {
		return Entry{}, fmt.Errorf("file %s: append cannot be applied to a running node", f.Path)
	}
	data, err := decode(f.Path, f.Contents)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Path: path.Clean(f.Path), Data: data, Perm: 0o644, ParentPerm: 0o755,
		UID: f.User.ID, GID: f.Group.ID}
	if f.Mode != nil {
		e.Perm = uint32(*f.Mode) & 0o7777
	}
	if f.User.Name != nil {
		e.User = *f.User.Name
	}
	if f.Group.Name != nil {
		e.Group = *f.Group.Name
	}
	return e, nil
}

func decode(p string, r types.Resource) ([]byte, error) {
	if r.Source == nil {
		return nil, nil
	}
	in, err := ignition.DecodeInline(*r.Source, r.Compression, ignition.MaxInlineDecompressed)
	if errors.Is(err, ignition.ErrNotInline) {
		scheme, _, _ := strings.Cut(*r.Source, ":")
		return nil, fmt.Errorf("file %s: only inline data: sources can be applied on a node, not %s:", p, scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", p, err)
	}
	return in.Data, nil
}

func unitEntries(u types.Unit) []Entry {
	var out []Entry
	unitPath := path.Join(UnitDir, u.Name)
	switch {
	case u.Mask != nil && *u.Mask:
		out = append(out, Entry{Path: unitPath, Link: DevNull, Unit: u.Name, ParentPerm: 0o755})
	case u.Contents != nil:
		out = append(out, Entry{Path: unitPath, Data: []byte(*u.Contents), Perm: 0o644, Unit: u.Name, ParentPerm: 0o755})
	}
	for _, d := range u.Dropins {
		// An empty dropin means "no dropin": it is not owned, so a managed one is removed.
		if d.Contents == nil || *d.Contents == "" {
			continue
		}
		out = append(out, Entry{Path: path.Join(UnitDir, u.Name+".d", d.Name), Data: []byte(*d.Contents),
			Perm: 0o644, Unit: u.Name, ParentPerm: 0o755})
	}
	return out
}

func sshEntry(keys []types.SSHAuthorizedKey) Entry {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strings.TrimSpace(string(k)))
		b.WriteByte('\n')
	}
	return Entry{Path: SSHKeysPath, Data: []byte(b.String()), Perm: 0o600, User: protocol.CoreUser, Group: protocol.CoreUser,
		ParentPerm: 0o700, ParentOwner: protocol.CoreUser, OnlyIfUser: protocol.CoreUser}
}
